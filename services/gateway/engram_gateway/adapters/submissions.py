"""What the gateway accepted, so a status URL answers 'pending' before the owner has it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

SUBMISSIONS = "submissions"


class Submissions:
    """Accepted writes per tenant, keyed `tenant:kind:id`."""

    def __init__(self, db: Any) -> None:
        self.collection = db[SUBMISSIONS]

    async def record(self, tenant_id: str, kind: str, item_id: str, **fields: Any) -> None:
        """Remember an accepted write (idempotent on its id)."""
        await self.collection.update_one(
            {"_id": f"{tenant_id}:{kind}:{item_id}"},
            {
                "$set": {
                    **fields,
                    "tenant_id": tenant_id,
                    "kind": kind,
                    "updated_at": datetime.now(UTC),
                }
            },
            upsert=True,
        )

    async def get(self, tenant_id: str, kind: str, item_id: str) -> dict[str, Any] | None:
        """The accepted write, only within the caller's tenant."""
        doc: dict[str, Any] | None = await self.collection.find_one(
            {"_id": f"{tenant_id}:{kind}:{item_id}", "tenant_id": tenant_id}
        )
        return doc
