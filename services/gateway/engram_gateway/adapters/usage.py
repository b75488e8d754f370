"""Per-tenant usage counters and the tenant's own quota limits, in the gateway's database."""

from __future__ import annotations

from typing import Any

from engram_gateway.adapters.registry import TENANTS
from engram_gateway.domain.quotas import QUOTAS, Usage

USAGE = "tenant_usage"


class UsageCounters:
    """One row per tenant (`_id` is the tenant) counting what its accepted writes hold."""

    def __init__(self, db: Any) -> None:
        self.usage = db[USAGE]
        self.tenants = db[TENANTS]

    async def used(self, tenant_id: str) -> Usage:
        """What the tenant's accepted writes hold, as counted so far."""
        row = await self.usage.find_one({"_id": tenant_id, "tenant_id": tenant_id}) or {}
        return Usage(*(int(row.get(q, 0)) for q in QUOTAS))

    async def add(self, tenant_id: str, amount: Usage) -> None:
        """Add to (or, negative, take from) the tenant's counters in one write."""
        changes = {q: n for q, n in amount.as_dict().items() if n}
        if changes:
            await self.usage.update_one(
                {"_id": tenant_id, "tenant_id": tenant_id},
                {"$inc": changes, "$set": {"tenant_id": tenant_id}},
                upsert=True,
            )

    async def overrides(self, tenant_id: str) -> dict[str, int]:
        """The tenant's own limits (its row's `quotas`), empty when it has none."""
        row = await self.tenants.find_one({"_id": tenant_id}, {"quotas": 1}) or {}
        return dict(row.get("quotas") or {})

    async def set_overrides(self, tenant_id: str, limits: dict[str, int]) -> bool:
        """Set some of the tenant's own limits; False when there is no such tenant."""
        merged = {**await self.overrides(tenant_id), **limits}
        result = await self.tenants.update_one({"_id": tenant_id}, {"$set": {"quotas": merged}})
        return bool(result.matched_count)
