"""Enrichment's copy of each passage it indexes (`_id` tenant:passage id): what a search hit
cites, and what a computed vector is checked against before it is stored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pymongo import ASCENDING, IndexModel, ReplaceOne

from engram_enrichment.domain.passage_rows import PassageRow
from engram_events.payloads.passages import PassageUpserted
from engram_platform.indexes import Indexes

PASSAGES = "passages"
INDEXES: Indexes = {
    PASSAGES: [IndexModel([("tenant_id", ASCENDING), ("document_id", ASCENDING)])],
}
"""Prune verification counts a deleted document's passages, and a new version looks up the
document's rows of the same embedded text; everything else is by `_id`."""


def passage_row(doc: Mapping[str, Any]) -> PassageRow:
    """A stored passage as the service reads it (the key stays here)."""
    fields = {name: doc[name] for name in PassageUpserted.model_fields if name in doc}
    return PassageRow(
        tenant_id=doc["tenant_id"],
        passage=PassageUpserted.model_validate(fields),
        embedded_sha256=doc["embedded_sha256"],
    )


def passage_doc(row: PassageRow) -> dict[str, Any]:
    """A passage as stored: the passage's fields, its digest, keyed by tenant and passage id."""
    key = f"{row.tenant_id}:{row.passage_id}"
    passage = row.passage.model_dump()
    return {
        **passage,
        "embedded_sha256": row.embedded_sha256,
        "_id": key,
        "tenant_id": row.tenant_id,
    }


class MongoPassageRows:
    """Rows are replaced by `_id`, so a replayed `passage.upserted` writes the same row."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def put(self, rows: Sequence[PassageRow]) -> None:
        """Upsert the passages' rows in one unordered bulk write."""
        if not rows:
            return
        docs = [passage_doc(row) for row in rows]
        await self.db[PASSAGES].bulk_write(
            [
                ReplaceOne({"_id": doc["_id"], "tenant_id": doc["tenant_id"]}, doc, upsert=True)
                for doc in docs
            ],
            ordered=False,
        )

    async def get_many(self, tenant_id: str, passage_ids: Sequence[str]) -> dict[str, PassageRow]:
        """The stored rows of those passages that exist, by passage id, in one query."""
        if not passage_ids:
            return {}
        ids = [f"{tenant_id}:{passage_id}" for passage_id in passage_ids]
        rows = (
            await self.db[PASSAGES]
            .find({"_id": {"$in": ids}, "tenant_id": tenant_id})
            .to_list(None)
        )
        return {str(doc["passage_id"]): passage_row(doc) for doc in rows}

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
    ) -> list[PassageRow]:
        """The document's rows with one of these embedded-text digests, in one query."""
        if not digests:
            return []
        query = {
            "tenant_id": tenant_id,
            "document_id": document_id,
            "embedded_sha256": {"$in": sorted(set(digests))},
        }
        return [passage_row(doc) for doc in await self.db[PASSAGES].find(query).to_list(None)]
