"""Per-tenant storage quotas at the door: a write that would overrun one is refused before it
is queued, and what an accepted write adds is counted once, whatever its retries."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from engram_gateway.domain.quotas import Usage, first_exceeded, limits_for
from engram_gateway.domain.recent import Recent
from engram_gateway.ports import UsageStore
from engram_platform.problems import Problem

log = logging.getLogger(__name__)


class Quotas:
    """Checks demands against a tenant's limits (defaults unless its row overrides them) and
    its counters; limits are remembered for `limits_seconds`, counters are read each time."""

    def __init__(
        self,
        store: UsageStore,
        defaults: Usage,
        *,
        limits_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.defaults = defaults
        self._limits: Recent[Usage] = Recent(limits_seconds, clock=clock)

    async def admit(self, tenant_id: str, demand: Usage) -> None:
        """Refuse (403 `quota-exceeded`) a demand that would overrun one of the tenant's quotas."""
        if not demand.any():
            return
        exceeded = first_exceeded(
            await self.limits(tenant_id), await self.store.used(tenant_id), demand
        )
        if exceeded is not None:
            raise Problem(
                403,
                "quota-exceeded",
                f"this write would exceed the tenant's {exceeded.quota} quota",
                quota=exceeded.quota,
                limit=exceeded.limit,
                used=exceeded.used,
                requested=exceeded.requested,
            )

    async def count(self, tenant_id: str, amount: Usage) -> None:
        """Add an accepted write's amount; a failed count never fails the accepted write."""
        try:
            await self.store.add(tenant_id, amount)
        except Exception:
            log.warning("usage not counted", extra={"tenant_id": tenant_id}, exc_info=True)

    async def limits(self, tenant_id: str) -> Usage:
        """The tenant's limits: the defaults with its own overrides applied."""
        known = self._limits.get(tenant_id)
        if known is None:
            known = limits_for(self.defaults, await self.store.overrides(tenant_id))
            self._limits.put(tenant_id, known)
        return known
