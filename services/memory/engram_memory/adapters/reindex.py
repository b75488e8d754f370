"""The reindex's Mongo side: the document holding the active space and the job
(`engram_embedders.moving.ReindexDocument`, in `memory_reindex`), and every tenant's live rows
walked in `_id` order."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import ASCENDING

from engram_memory.adapters.rows import MEMORIES, memory_row, row_id
from engram_memory.domain.reindex import LIVE
from engram_memory.domain.rows import MemoryRow

REINDEX = "memory_reindex"
STORE = "memories"
"""The one document's id: the store's reindex state (the collection serves every tenant)."""


class ReindexStore:
    """Reads and writes across tenants on purpose: the collection being moved holds them all."""

    def __init__(self, db: Any) -> None:
        self.rows = db[MEMORIES]

    @staticmethod
    def key(row: MemoryRow) -> str:
        """A row's `_id`: the walk's order and cursor."""
        return row_id(row.tenant_id, row.memory_id)

    async def page(self, after: str | None, limit: int) -> list[MemoryRow]:
        query: dict[str, Any] = {"status": {"$in": list(LIVE)}}
        if after is not None:
            query["_id"] = {"$gt": after}
        cursor = self.rows.find(query).sort([("_id", ASCENDING)]).limit(limit)
        return [memory_row(doc) async for doc in cursor]

    async def stored_between(
        self, since: datetime, until: datetime, after: str | None, limit: int
    ) -> list[MemoryRow]:
        stored = {"$gte": since, "$lt": until}
        query: dict[str, Any] = {"status": {"$in": list(LIVE)}, "stored_at": stored}
        if after is not None:
            query["_id"] = {"$gt": after}
        cursor = self.rows.find(query).sort([("_id", ASCENDING)]).limit(limit)
        return [memory_row(doc) async for doc in cursor]

    async def by_keys(self, keys: Sequence[str]) -> dict[str, MemoryRow]:
        if not keys:
            return {}
        found = self.rows.find({"_id": {"$in": list(keys)}})
        return {doc["_id"]: memory_row(doc) async for doc in found}

    async def count_live(self) -> int:
        count: int = await self.rows.count_documents({"status": {"$in": list(LIVE)}})
        return count
