"""Which edit of a memory version won: one row per edited version, keyed `tenant:memory_id`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pymongo.errors import DuplicateKeyError

EDIT_CLAIMS = "memory_edits"


class EditClaims:
    """The unique `_id` makes exactly one edit of a version win, across gateway instances."""

    def __init__(self, db: Any) -> None:
        self.collection = db[EDIT_CLAIMS]

    async def claim(self, tenant_id: str, memory_id: str, newer_id: str, agent_id: str) -> bool:
        """Name `newer_id` the version replacing `memory_id`; False when another edit did first."""
        try:
            await self.collection.insert_one(
                {
                    "_id": f"{tenant_id}:{memory_id}",
                    "tenant_id": tenant_id,
                    "agent_id": agent_id,
                    "memory_id": memory_id,
                    "newer_id": newer_id,
                    "claimed_at": datetime.now(UTC),
                }
            )
        except DuplicateKeyError:
            return False
        return True

    async def holder(self, tenant_id: str, memory_id: str) -> str | None:
        """The version that replaces `memory_id`, if an edit named one."""
        row: dict[str, Any] | None = await self.collection.find_one(
            {"_id": f"{tenant_id}:{memory_id}", "tenant_id": tenant_id}
        )
        return None if row is None else str(row["newer_id"])

    async def take_over(self, tenant_id: str, memory_id: str, loser_id: str, newer_id: str) -> bool:
        """Replace a claim whose version never got stored (rejected), only if it still names it."""
        result = await self.collection.update_one(
            {"_id": f"{tenant_id}:{memory_id}", "tenant_id": tenant_id, "newer_id": loser_id},
            {"$set": {"newer_id": newer_id, "claimed_at": datetime.now(UTC)}},
        )
        return bool(result.modified_count)

    async def release(self, tenant_id: str, memory_id: str, newer_id: str) -> None:
        """Give the version back after a failed publish, only if this edit still holds it."""
        await self.collection.delete_one(
            {"_id": f"{tenant_id}:{memory_id}", "tenant_id": tenant_id, "newer_id": newer_id}
        )
