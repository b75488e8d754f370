"""The knowledge reindex's Mongo side: every tenant's entities and passages walked in `_id`
order (the active space and the job are `engram_embedders.moving.ReindexDocument`'s, in
`knowledge_reindex`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import ASCENDING

from engram_enrichment.adapters.passages import PASSAGES, passage_row
from engram_enrichment.adapters.store import ENTITIES, unpack_entity
from engram_enrichment.domain.passage_rows import PassageRow

REINDEX = "knowledge_reindex"
STORE = "knowledge"
"""The one document's id: the store's reindex state (the collection serves every tenant)."""


class KnowledgeWalkStore:
    """Reads across tenants on purpose: the collection being moved holds them all."""

    def __init__(self, db: Any) -> None:
        self.entities_ = db[ENTITIES]
        self.passages_ = db[PASSAGES]

    async def entities(self, after: str | None, limit: int) -> list[dict[str, Any]]:
        query: dict[str, Any] = {} if after is None else {"_id": {"$gt": after}}
        cursor = self.entities_.find(query).sort([("_id", ASCENDING)]).limit(limit)
        return [unpack_entity(doc) async for doc in cursor]

    async def entities_by_keys(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not keys:
            return {}
        cursor = self.entities_.find({"_id": {"$in": list(keys)}})
        return {doc["_id"]: unpack_entity(doc) async for doc in cursor}

    async def entities_updated_between(
        self, since: datetime, until: datetime, after: str | None, limit: int
    ) -> list[dict[str, Any]]:
        query: dict[str, Any] = {"updated_at": {"$gte": since, "$lt": until}}
        if after is not None:
            query["_id"] = {"$gt": after}
        cursor = self.entities_.find(query).sort([("_id", ASCENDING)]).limit(limit)
        return [unpack_entity(doc) async for doc in cursor]

    async def passages(self, after: str | None, limit: int) -> list[PassageRow]:
        query: dict[str, Any] = {} if after is None else {"_id": {"$gt": after}}
        cursor = self.passages_.find(query).sort([("_id", ASCENDING)]).limit(limit)
        return [passage_row(doc) async for doc in cursor]

    async def passages_by_keys(self, keys: Sequence[str]) -> dict[str, PassageRow]:
        if not keys:
            return {}
        found = self.passages_.find({"_id": {"$in": list(keys)}})
        return {doc["_id"]: passage_row(doc) async for doc in found}
