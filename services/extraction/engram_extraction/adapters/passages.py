"""Extraction's passages: one row per passage of a document version (`_id` tenant:passage id),
and one head per document naming its current version, so a listing reads that version's rows
in order over a declared index. A withdrawn passage stays as a marker without its text (status
`withdrawn`, the cause that withdrew it), so a replay of that cause announces it again."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel, ReplaceOne

from engram_platform.indexes import Indexes

PASSAGES = "passages"
PASSAGE_HEADS = "passage_heads"
INDEXES: Indexes = {
    PASSAGES: [
        IndexModel(
            [
                ("tenant_id", ASCENDING),
                ("document_id", ASCENDING),
                ("version", ASCENDING),
                ("position", ASCENDING),
            ]
        )
    ],
}
"""A document version's passages in order, and (by its prefix) a document's passages of every
version (`position`, the ordinal as a zero-padded string, which
sorts as text does, so the local server's index serves the range and the sort); heads are read by
`_id`."""


def position(ordinal: int) -> str:
    """An ordinal as a string that sorts like the number."""
    return f"{ordinal:09d}"


class PassageStore:
    """Rows are replaced by `_id` (a replay writes the same rows); the head is written last."""

    def __init__(self, db: Any, *, batch: int = 1000) -> None:
        self.db = db
        self.batch = batch

    async def write_passages(
        self,
        tenant_id: str,
        document_id: str,
        version: str,
        rows: Sequence[dict[str, Any]],
        at: datetime,
    ) -> None:
        """The version's passage rows, then the head that makes them the document's current
        ones."""
        for start in range(0, len(rows), self.batch):
            chunk = rows[start : start + self.batch]
            await self.db[PASSAGES].bulk_write(
                [
                    ReplaceOne(
                        {"_id": f"{tenant_id}:{row['passage_id']}", "tenant_id": tenant_id},
                        {
                            **row,
                            "_id": f"{tenant_id}:{row['passage_id']}",
                            "tenant_id": tenant_id,
                            "position": position(row["ordinal"]),
                        },
                        upsert=True,
                    )
                    for row in chunk
                ],
                ordered=False,
            )
        await self.db[PASSAGE_HEADS].replace_one(
            {"_id": f"{tenant_id}:{document_id}", "tenant_id": tenant_id},
            {
                "tenant_id": tenant_id,
                "document_id": document_id,
                "version": version,
                "count": len(rows),
                "updated_at": at,
            },
            upsert=True,
        )

    async def current_passages(
        self, tenant_id: str, document_id: str, after: int, limit: int
    ) -> tuple[str, list[dict[str, Any]]] | None:
        """The current version and its passages after an ordinal (-1: from the first), in order;
        None when the document has no passages."""
        head = await self.db[PASSAGE_HEADS].find_one(
            {"_id": f"{tenant_id}:{document_id}", "tenant_id": tenant_id}
        )
        if head is None:
            return None
        query: dict[str, Any] = {
            "tenant_id": tenant_id,
            "document_id": document_id,
            "version": head["version"],
        }
        if after >= 0:
            query["position"] = {"$gt": position(after)}
        cursor = self.db[PASSAGES].find(query).sort("position", ASCENDING)
        rows = await cursor.limit(limit).to_list(limit)
        return str(head["version"]), rows

    async def document_passages(self, tenant_id: str, document_id: str) -> list[dict[str, Any]]:
        """Every passage row and marker of the document, any version (ids and status only)."""
        cursor = self.db[PASSAGES].find(
            {"tenant_id": tenant_id, "document_id": document_id},
            {"passage_id": 1, "version": 1, "status": 1, "withdrawn_by": 1},
        )
        return list(await cursor.to_list(None))

    async def withdraw_passages(
        self, tenant_id: str, passage_ids: Sequence[str], cause: str, at: datetime
    ) -> None:
        """Rows become markers: status `withdrawn`, the cause, no text."""
        for start in range(0, len(passage_ids), self.batch):
            ids = [f"{tenant_id}:{pid}" for pid in passage_ids[start : start + self.batch]]
            await self.db[PASSAGES].update_many(
                {"_id": {"$in": ids}, "tenant_id": tenant_id},
                {
                    "$set": {"status": "withdrawn", "withdrawn_by": cause, "withdrawn_at": at},
                    "$unset": {"text": ""},
                },
            )

    async def drop_head(self, tenant_id: str, document_id: str) -> None:
        """The document has no current passages any more."""
        await self.db[PASSAGE_HEADS].delete_one(
            {"_id": f"{tenant_id}:{document_id}", "tenant_id": tenant_id}
        )

    async def live_passages_of(self, tenant_id: str, document_ids: Sequence[str]) -> int:
        """How many passages of these documents are not withdrawn (prune verification)."""
        if not document_ids:
            return 0
        query = {
            "tenant_id": tenant_id,
            "document_id": {"$in": list(document_ids)},
            "status": {"$ne": "withdrawn"},
        }
        return int(await self.db[PASSAGES].count_documents(query))
