"""The reindex's Mongo side: one document holding the active space and the job (switched in one
update), and every tenant's live rows walked in `_id` order."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import ASCENDING

from engram_memory.adapters.rows import MEMORIES
from engram_memory.domain.reindex import LIVE, Reindex, Space

REINDEX = "memory_reindex"
STORE = "memories"
"""The one document's id: the store's reindex state (the collection serves every tenant)."""


class ReindexStore:
    """Reads and writes across tenants on purpose: the collection being moved holds them all."""

    def __init__(self, db: Any) -> None:
        self.state = db[REINDEX]
        self.rows = db[MEMORIES]

    async def load(self) -> tuple[Space | None, Reindex | None]:
        doc = await self.state.find_one({"_id": STORE})
        if doc is None:
            return None, None
        active = Space.of(doc["active"]) if doc.get("active") else None
        job = Reindex.of(doc["job"]) if doc.get("job") else None
        return active, job

    async def save(self, job: Reindex) -> None:
        await self.state.update_one({"_id": STORE}, {"$set": {"job": job.as_doc()}}, upsert=True)

    async def switch(self, job: Reindex) -> None:
        """The new active space and the finished job, in one document update."""
        await self.state.update_one(
            {"_id": STORE},
            {"$set": {"active": job.target.as_doc(), "job": job.as_doc()}},
            upsert=True,
        )

    async def page(self, after: str | None, limit: int) -> list[dict[str, Any]]:
        query: dict[str, Any] = {"status": {"$in": list(LIVE)}}
        if after is not None:
            query["_id"] = {"$gt": after}
        cursor = self.rows.find(query).sort([("_id", ASCENDING)]).limit(limit)
        return [row async for row in cursor]

    async def stored_between(
        self, since: datetime, until: datetime, after: str | None, limit: int
    ) -> list[dict[str, Any]]:
        stored = {"$gte": since, "$lt": until}
        query: dict[str, Any] = {"status": {"$in": list(LIVE)}, "stored_at": stored}
        if after is not None:
            query["_id"] = {"$gt": after}
        cursor = self.rows.find(query).sort([("_id", ASCENDING)]).limit(limit)
        return [row async for row in cursor]

    async def by_ids(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        return {row["_id"]: row async for row in self.rows.find({"_id": {"$in": list(ids)}})}

    async def count_live(self) -> int:
        count: int = await self.rows.count_documents({"status": {"$in": list(LIVE)}})
        return count
