"""What the gateway accepted, so a status URL answers 'pending' before the owner has it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pymongo import ReturnDocument, UpdateOne
from pymongo.errors import BulkWriteError, DuplicateKeyError

SUBMISSIONS = "submissions"


class Submissions:
    """Accepted writes per tenant, keyed `tenant:kind:id`."""

    def __init__(self, db: Any) -> None:
        self.collection = db[SUBMISSIONS]

    async def record(
        self, tenant_id: str, kind: str, item_id: str, **fields: Any
    ) -> dict[str, Any] | None:
        """Remember an accepted write (idempotent on its id); the noted version it replaced, or
        None when the id is new (so the quotas count it once).

        Two requests for one id (the same document name uploaded twice at once) race to insert
        it; the loser's upsert fails on the duplicate key and is retried as the update it now is.
        """
        key, update = _upsert(tenant_id, kind, item_id, fields, datetime.now(UTC))
        try:
            return await self._replace(key, update)
        except DuplicateKeyError:
            return await self._replace(key, update)

    async def _replace(self, key: dict[str, Any], update: dict[str, Any]) -> dict[str, Any] | None:
        before: dict[str, Any] | None = await self.collection.find_one_and_update(
            key,
            update,
            upsert=True,
            return_document=ReturnDocument.BEFORE,
        )
        return before

    async def record_many(
        self, tenant_id: str, kind: str, items: list[tuple[str, dict[str, Any]]]
    ) -> int:
        """Remember many accepted writes in one trip (idempotent on their ids); how many of
        the ids are new.

        When one lost an insert race to another request, they are written one by one as
        `record` does. The local server's answer to that bulk write lacks `nModified`, which
        pymongo reads as a KeyError rather than a BulkWriteError.
        """
        now = datetime.now(UTC)
        updates = [
            UpdateOne(*_upsert(tenant_id, kind, item_id, fields, now), upsert=True)
            for item_id, fields in items
        ]
        try:
            result = await self.collection.bulk_write(updates, ordered=False)
            return int(result.upserted_count)
        except (BulkWriteError, KeyError):
            previous = [await self.record(tenant_id, kind, i, **f) for i, f in items]
            return sum(p is None for p in previous)

    async def release(self, tenant_id: str, kind: str, item_id: str) -> dict[str, Any] | None:
        """Mark an accepted write deleted, once: the row as it was when this call released it,
        None when it is unknown or was released already."""
        before: dict[str, Any] | None = await self.collection.find_one_and_update(
            {
                "_id": f"{tenant_id}:{kind}:{item_id}",
                "tenant_id": tenant_id,
                "released_at": {"$exists": False},
            },
            {"$set": {"released_at": datetime.now(UTC)}},
            return_document=ReturnDocument.BEFORE,
        )
        return before

    async def get(self, tenant_id: str, kind: str, item_id: str) -> dict[str, Any] | None:
        """The accepted write, only within the caller's tenant."""
        doc: dict[str, Any] | None = await self.collection.find_one(
            {"_id": f"{tenant_id}:{kind}:{item_id}", "tenant_id": tenant_id}
        )
        return doc

    async def held(
        self, tenant_id: str, items: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """The accepted writes among these (kind, id) pairs, in one `_id $in` lookup."""
        keys = list(dict.fromkeys(f"{tenant_id}:{kind}:{item_id}" for kind, item_id in items))
        if not keys:
            return {}
        cursor = self.collection.find({"_id": {"$in": keys}, "tenant_id": tenant_id})
        found: dict[tuple[str, str], dict[str, Any]] = {}
        async for row in cursor:
            kind, item_id = row["_id"][len(tenant_id) + 1 :].split(":", 1)
            found[(kind, item_id)] = row
        return found


def _upsert(
    tenant_id: str, kind: str, item_id: str, fields: dict[str, Any], now: datetime
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The filter and update that keep one accepted write: `_id` is `tenant:kind:id`."""
    return (
        {"_id": f"{tenant_id}:{kind}:{item_id}", "tenant_id": tenant_id},
        {
            "$set": {**fields, "tenant_id": tenant_id, "kind": kind, "updated_at": now},
            "$unset": {"released_at": ""},
        },
    )
