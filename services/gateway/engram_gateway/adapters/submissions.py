"""What the gateway accepted, so a status URL answers 'pending' before the owner has it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pymongo import UpdateOne
from pymongo.errors import BulkWriteError

SUBMISSIONS = "submissions"


class Submissions:
    """Accepted writes per tenant, keyed `tenant:kind:id`."""

    def __init__(self, db: Any) -> None:
        self.collection = db[SUBMISSIONS]

    async def record(self, tenant_id: str, kind: str, item_id: str, **fields: Any) -> None:
        """Remember one accepted write: `record_many` with one item, so both upsert alike."""
        await self.record_many(tenant_id, kind, [(item_id, fields)])

    async def record_many(
        self, tenant_id: str, kind: str, items: list[tuple[str, dict[str, Any]]]
    ) -> None:
        """Remember many accepted writes in one trip (idempotent on their ids).

        Two requests for one id (the same document name uploaded twice at once) race to insert
        it; the loser's upsert fails on the duplicate key and is retried as the update it now is.
        """
        now = datetime.now(UTC)
        updates = [
            UpdateOne(
                {"_id": f"{tenant_id}:{kind}:{item_id}"},
                {"$set": {**fields, "tenant_id": tenant_id, "kind": kind, "updated_at": now}},
                upsert=True,
            )
            for item_id, fields in items
        ]
        try:
            await self.collection.bulk_write(updates, ordered=False)
        except BulkWriteError:
            await self.collection.bulk_write(updates, ordered=False)

    async def get(self, tenant_id: str, kind: str, item_id: str) -> dict[str, Any] | None:
        """The accepted write, only within the caller's tenant."""
        doc: dict[str, Any] | None = await self.collection.find_one(
            {"_id": f"{tenant_id}:{kind}:{item_id}", "tenant_id": tenant_id}
        )
        return doc
