"""A tenant's API keys as its admins see them: listed, looked up, revoked and touched; every
query names the tenant. Keys are issued by `Registry.add_key`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engram_gateway.adapters.registry import API_KEYS
from engram_gateway.domain.access import ADMIN, StoredKey

MAX_KEYS = 1000
"""A listing's cap: keys are issued by hand, so a tenant holds few."""


class KeyStore:
    """The `api_keys` rows of one tenant at a time."""

    def __init__(self, db: Any) -> None:
        self.collection = db[API_KEYS]

    async def list(self, tenant_id: str) -> list[StoredKey]:
        """The tenant's keys, revoked ones too, oldest first."""
        cursor = (
            self.collection.find({"tenant_id": tenant_id})
            .sort([("created_at", 1), ("_id", 1)])
            .limit(MAX_KEYS)
        )
        return [_key(row) async for row in cursor]

    async def get(self, tenant_id: str, key_id: str) -> StoredKey | None:
        """One key, only within its tenant."""
        row = await self.collection.find_one({"_id": key_id, "tenant_id": tenant_id})
        return _key(row) if row else None

    async def active_admins(self, tenant_id: str) -> set[str]:
        """The ids of the tenant's admin keys not revoked."""
        cursor = self.collection.find({"tenant_id": tenant_id}, {"roles": 1, "revoked": 1})
        return {
            row["_id"]
            async for row in cursor
            if ADMIN in row.get("roles", ()) and not row.get("revoked")
        }

    async def revoke(self, tenant_id: str, key_id: str, at: datetime) -> bool:
        """Mark a live key revoked; False when it was not live."""
        result = await self.collection.update_one(
            {"_id": key_id, "tenant_id": tenant_id, "revoked": False},
            {"$set": {"revoked": True, "revoked_at": at}},
        )
        return bool(result.modified_count)

    async def restore(self, tenant_id: str, key_id: str, at: datetime) -> None:
        """Undo this request's own revocation (the one made `at`)."""
        await self.collection.update_one(
            {"_id": key_id, "tenant_id": tenant_id, "revoked_at": at},
            {"$set": {"revoked": False}, "$unset": {"revoked_at": ""}},
        )

    async def grant(self, tenant_id: str, key_id: str, role: str) -> None:
        """Add a role to a key (the operator's command, for keys issued before roles existed)."""
        await self.collection.update_one(
            {"_id": key_id, "tenant_id": tenant_id}, {"$addToSet": {"roles": role}}
        )

    async def touch(self, tenant_id: str, key_id: str, at: datetime) -> None:
        """Note when the key was last used."""
        await self.collection.update_one(
            {"_id": key_id, "tenant_id": tenant_id}, {"$set": {"last_used_at": at}}
        )


def _key(row: dict[str, Any]) -> StoredKey:
    """A stored key row as the lifecycle reads it (its secret's hash and salt stay behind)."""
    return StoredKey(
        key_id=row["_id"],
        tenant_id=row["tenant_id"],
        roles=tuple(row.get("roles", ())),
        created_at=row["created_at"],
        name=row.get("name"),
        revoked=bool(row.get("revoked")),
        revoked_at=row.get("revoked_at"),
        last_used_at=row.get("last_used_at"),
    )
