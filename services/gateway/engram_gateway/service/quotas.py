"""Per-tenant storage quotas at the door: a write that would overrun one is refused before it
is queued, and what an accepted write adds is counted once, whatever its retries."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from engram_gateway.domain.headroom import far_below
from engram_gateway.domain.quotas import Usage, first_exceeded, limits_for
from engram_gateway.domain.recent import Recent
from engram_gateway.domain.single_flight import SingleFlight
from engram_gateway.ports import UsageStore
from engram_gateway.service.coalesced import CoalescedCounts
from engram_platform.problems import Problem

log = logging.getLogger(__name__)


COUNTERS_SECONDS = 1.0
"""How long a tenant's counters as read (plus what this instance counted since) may answer."""


class Quotas:
    """Checks demands against a tenant's limits (defaults unless its row overrides them) and
    its counters; limits are remembered for `limits_seconds`. Counters are read for each write
    unless a read of the last `counters_seconds`, with this instance's own counts added, leaves
    the write far below every limit (`domain.headroom`): one database read less per write."""

    def __init__(
        self,
        store: UsageStore,
        defaults: Usage,
        *,
        limits_seconds: float = 5.0,
        counters_seconds: float = COUNTERS_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.defaults = defaults
        self._limits: Recent[Usage] = Recent(limits_seconds, clock=clock)
        self._used: Recent[list[Usage]] = Recent(counters_seconds, clock=clock)
        self._counts = CoalescedCounts(store.add)
        self._reads: SingleFlight[Usage] = SingleFlight()

    async def admit(self, tenant_id: str, demand: Usage) -> None:
        """Refuse (403 `quota-exceeded`) a demand that would overrun one of the tenant's quotas."""
        if not demand.any():
            return
        limits = await self.limits(tenant_id)
        remembered = self._used.get(tenant_id)
        if remembered is not None and far_below(limits, remembered[0], demand):
            return
        used = await self._reads.read(tenant_id, lambda: self.store.used(tenant_id))
        self._used.put(tenant_id, [used])
        exceeded = first_exceeded(limits, used, demand)
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
        """Add an accepted write's amount (with the tenant's other counts of the moment); a
        failed count never fails the accepted write."""
        try:
            await self._counts.add(tenant_id, amount)
        except Exception:
            log.warning("usage not counted", extra={"tenant_id": tenant_id}, exc_info=True)
            return
        remembered = self._used.get(tenant_id)
        if remembered is not None:
            remembered[0] = remembered[0].plus(amount)

    async def limits(self, tenant_id: str) -> Usage:
        """The tenant's limits: the defaults with its own overrides applied."""
        known = self._limits.get(tenant_id)
        if known is None:
            known = limits_for(self.defaults, await self.store.overrides(tenant_id))
            self._limits.put(tenant_id, known)
        return known
