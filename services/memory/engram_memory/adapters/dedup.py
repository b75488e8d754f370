"""Dedup slots in Mongo: `tenant:dedup:key` names the memory that holds the content now."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram_platform.mongo import insert_new

SLOTS = "memory_dedup"


def slot_id(tenant_id: str, key: str) -> str:
    """Slots are keyed by tenant first, like rows."""
    return f"{tenant_id}:dedup:{key}"


class DedupSlots:
    """One document per slot; a claim is an insert, a hand-over a compare-and-set."""

    def __init__(self, db: Any) -> None:
        self.collection = db[SLOTS]

    async def holders(self, tenant_id: str, keys: Sequence[str]) -> dict[str, str]:
        """The memory holding each of these slots (slots never claimed are left out)."""
        wanted = {slot_id(tenant_id, key): key for key in dict.fromkeys(keys)}
        if not wanted:
            return {}
        cursor = self.collection.find({"_id": {"$in": list(wanted)}, "tenant_id": tenant_id})
        return {wanted[doc["_id"]]: doc["memory_id"] async for doc in cursor}

    async def claim(
        self, tenant_id: str, claims: Sequence[tuple[str, str]]
    ) -> tuple[dict[str, str], set[str]]:
        """Claim slots `(key, memory_id)` in one insert, free or not (new content's slots are
        free, so nothing is read first); returns each key's holder afterwards and the keys this
        insert won. A slot already held costs one read of its holder."""
        docs = [
            {"_id": slot_id(tenant_id, key), "tenant_id": tenant_id, "memory_id": memory_id}
            for key, memory_id in claims
        ]
        taken = await insert_new(self.collection, docs)
        won = {key: memory_id for n, (key, memory_id) in enumerate(claims) if n not in taken}
        lost = [claims[n][0] for n in sorted(taken)]
        held = await self.holders(tenant_id, lost) if lost else {}
        return {**won, **held}, set(won)

    async def hand_over(self, tenant_id: str, key: str, holder: str, memory_id: str) -> str:
        """Move the slot from a holder that no longer counts; returns the holder afterwards."""
        await self.collection.update_one(
            {"_id": slot_id(tenant_id, key), "tenant_id": tenant_id, "memory_id": holder},
            {"$set": {"memory_id": memory_id}},
        )
        return (await self.holders(tenant_id, [key])).get(key, memory_id)
