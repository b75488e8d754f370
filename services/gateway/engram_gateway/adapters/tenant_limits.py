"""A tenant's own rate limits: the optional `rate_limits` field of its row in `tenants`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram_gateway.domain.rate_limits import CLASSES, Policy
from engram_gateway.domain.recent import Recent

TENANTS = "tenants"


class TenantLimits:
    """Reads `{"rate_limits": {"write": {"rate": 50, "burst": 100}, ...}}` by the tenant's id.

    Answers are remembered for `cache_seconds` like the registry's, so a changed row takes
    effect within that time; a class the row does not name keeps the gateway's default.
    """

    def __init__(self, db: Any, *, cache_seconds: float = 0.0) -> None:
        self.db = db
        self._known: Recent[Mapping[str, Policy]] = Recent(cache_seconds)

    async def overrides(self, tenant_id: str) -> Mapping[str, Policy]:
        """The tenant's policies by class (empty when its row names none)."""
        known = self._known.get(tenant_id)
        if known is not None:
            return known
        row = await self.db[TENANTS].find_one({"_id": tenant_id}, {"rate_limits": 1})
        found = parse_overrides((row or {}).get("rate_limits"))
        self._known.put(tenant_id, found)
        return found

    async def set_overrides(self, tenant_id: str, policies: Mapping[str, Policy]) -> bool:
        """Set some classes' policies on the tenant's row (the others keep theirs); False when
        there is no such tenant."""
        fields = {
            f"rate_limits.{name}": {"rate": policy.rate, "burst": policy.burst}
            for name, policy in policies.items()
        }
        result = await self.db[TENANTS].update_one({"_id": tenant_id}, {"$set": fields})
        self._known.forget(tenant_id)
        return bool(result.matched_count)


def parse_overrides(raw: Any) -> Mapping[str, Policy]:
    """The well-formed entries of a row's `rate_limits`; anything else is ignored."""
    if not isinstance(raw, dict):
        return {}
    found: dict[str, Policy] = {}
    for name in CLASSES:
        entry = raw.get(name)
        if not isinstance(entry, dict):
            continue
        rate, burst = entry.get("rate"), entry.get("burst")
        if isinstance(rate, int | float) and isinstance(burst, int) and rate > 0 and burst >= 1:
            found[name] = Policy(rate=float(rate), burst=burst)
    return found
