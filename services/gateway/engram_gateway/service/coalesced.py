"""Counting concurrent writes of one tenant with one database increment: under load each POST
paid its own `$inc` round trip; counts that arrive while the tenant's last increment is on its
way join the next one, which every one of them awaits (so each is still counted before its
write is answered, and a failure reaches each of them)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial

from engram_gateway.domain.group_commit import GroupCommit
from engram_gateway.domain.quotas import Usage

Add = Callable[[str, Usage], Awaitable[None]]
"""Adds an amount to a tenant's counters in one database write (`UsageStore.add`)."""


class CoalescedCounts:
    """At most one increment per tenant on its way; counts arriving meanwhile are summed (a
    group commit per tenant)."""

    def __init__(self, add: Add) -> None:
        self._add = add
        self._tenants: dict[str, GroupCommit[Usage, None]] = {}

    async def add(self, tenant_id: str, amount: Usage) -> None:
        """Count `amount` and return once it is written (raising what the write raised)."""
        trips = self._tenants.get(tenant_id)
        if trips is None:
            trips = self._tenants[tenant_id] = GroupCommit(partial(self._write, tenant_id))
        await trips.submit(amount)

    async def _write(self, tenant_id: str, amounts: Sequence[Usage]) -> list[None]:
        """One increment of the amounts' sum."""
        total = Usage()
        for amount in amounts:
            total = total.plus(amount)
        await self._add(tenant_id, total)
        return [None] * len(amounts)
