"""Enrichment's copy of each passage it indexes (`_id` tenant:passage id): what a search hit
cites, and what a computed vector is checked against before it is stored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pymongo import ASCENDING, IndexModel, ReplaceOne

from engram_platform.indexes import Indexes

PASSAGES = "passages"
INDEXES: Indexes = {
    PASSAGES: [IndexModel([("tenant_id", ASCENDING), ("document_id", ASCENDING)])],
}
"""Prune verification counts a deleted document's passages, and a new version looks up the
document's rows of the same embedded text; everything else is by `_id`."""


class MongoPassageRows:
    """Rows are replaced by `_id`, so a replayed `passage.upserted` writes the same row."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def put(self, tenant_id: str, rows: Sequence[dict[str, Any]]) -> None:
        """Upsert the passages' rows in one unordered bulk write."""
        if not rows:
            return
        await self.db[PASSAGES].bulk_write(
            [
                ReplaceOne(
                    {"_id": f"{tenant_id}:{row['passage_id']}", "tenant_id": tenant_id},
                    {**row, "_id": f"{tenant_id}:{row['passage_id']}", "tenant_id": tenant_id},
                    upsert=True,
                )
                for row in rows
            ],
            ordered=False,
        )

    async def get_many(
        self, tenant_id: str, passage_ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """The stored rows of those passages that exist, by passage id, in one query."""
        if not passage_ids:
            return {}
        ids = [f"{tenant_id}:{passage_id}" for passage_id in passage_ids]
        rows = (
            await self.db[PASSAGES]
            .find({"_id": {"$in": ids}, "tenant_id": tenant_id})
            .to_list(None)
        )
        return {str(row["passage_id"]): row for row in rows}

    async def remove(self, tenant_id: str, passage_ids: Sequence[str]) -> None:
        """Delete the passages' rows; unknown ids are ignored."""
        if passage_ids:
            ids = [f"{tenant_id}:{passage_id}" for passage_id in passage_ids]
            await self.db[PASSAGES].delete_many({"_id": {"$in": ids}, "tenant_id": tenant_id})

    async def count_of_documents(self, tenant_id: str, document_ids: Sequence[str]) -> int:
        """How many rows these documents' passages still have."""
        if not document_ids:
            return 0
        query = {"tenant_id": tenant_id, "document_id": {"$in": list(document_ids)}}
        return int(await self.db[PASSAGES].count_documents(query))

    async def with_embedded_text(
        self, tenant_id: str, document_id: str, digests: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The document's rows with one of these embedded-text digests, in one query."""
        if not digests:
            return []
        query = {
            "tenant_id": tenant_id,
            "document_id": document_id,
            "embedded_sha256": {"$in": sorted(set(digests))},
        }
        return list(await self.db[PASSAGES].find(query).to_list(None))
