"""Counting concurrent writes of one tenant with one database increment: under load each POST
paid its own `$inc` round trip; counts that arrive while the tenant's last increment is on its
way join the next one, which every one of them awaits (so each is still counted before its
write is answered, and a failure reaches each of them)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from engram_gateway.domain.quotas import Usage

Add = Callable[[str, Usage], Awaitable[None]]
"""Adds an amount to a tenant's counters in one database write (`UsageStore.add`)."""


@dataclass
class _Increment:
    """Counts waiting to be written together, and the task writing them."""

    amount: Usage = field(default_factory=Usage)
    task: asyncio.Task[None] | None = None


class CoalescedCounts:
    """At most one increment per tenant on its way; counts arriving meanwhile are summed."""

    def __init__(self, add: Add) -> None:
        self._add = add
        self._open: dict[str, _Increment] = {}
        self._writing: dict[str, asyncio.Task[None]] = {}

    async def add(self, tenant_id: str, amount: Usage) -> None:
        """Count `amount` and return once it is written (raising what the write raised)."""
        increment = self._open.get(tenant_id)
        if increment is None:
            increment = self._open[tenant_id] = _Increment()
            previous = self._writing.get(tenant_id)
            increment.task = asyncio.create_task(self._write(tenant_id, increment, previous))
            self._writing[tenant_id] = increment.task
        increment.amount = increment.amount.plus(amount)
        assert increment.task is not None
        await asyncio.shield(increment.task)

    async def _write(
        self, tenant_id: str, increment: _Increment, previous: asyncio.Task[None] | None
    ) -> None:
        """After the tenant's previous increment, close this one to joiners and write it."""
        try:
            if previous is not None:
                await asyncio.wait([previous])
            self._close(tenant_id, increment)
            await self._add(tenant_id, increment.amount)
        finally:
            self._close(tenant_id, increment)
            if self._writing.get(tenant_id) is asyncio.current_task():
                del self._writing[tenant_id]

    def _close(self, tenant_id: str, increment: _Increment) -> None:
        """No count joins this increment any more."""
        if self._open.get(tenant_id) is increment:
            del self._open[tenant_id]
