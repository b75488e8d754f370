"""Counts arriving while a tenant's increment is on its way go to the database together, each
awaiting its own write; tenants never share one, and a failed write reaches every count in it."""

from __future__ import annotations

import asyncio

import pytest

from engram_gateway.domain.quotas import Usage
from engram_gateway.service.coalesced import CoalescedCounts

pytestmark = pytest.mark.unit

ONE = Usage(memories=1)


class SlowCounters:
    """Increments held until released, so counts pile up behind one."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, Usage]] = []
        self.release = asyncio.Event()
        self.fail = False

    async def add(self, tenant_id: str, amount: Usage) -> None:
        await self.release.wait()
        if self.fail:
            raise ConnectionError("database down")
        self.writes.append((tenant_id, amount))


async def test_counts_behind_an_increment_on_its_way_are_written_as_one() -> None:
    store = SlowCounters()
    counts = CoalescedCounts(store.add)
    first = asyncio.create_task(counts.add("t", ONE))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    later = [asyncio.create_task(counts.add("t", ONE)) for _ in range(5)]
    await asyncio.sleep(0)
    assert not any(t.done() for t in [first, *later])
    store.release.set()
    await asyncio.gather(first, *later)
    assert store.writes == [("t", ONE), ("t", Usage(memories=5))]


async def test_tenants_are_counted_apart() -> None:
    store = SlowCounters()
    store.release.set()
    counts = CoalescedCounts(store.add)
    await asyncio.gather(counts.add("a", ONE), counts.add("b", ONE), counts.add("a", ONE))
    assert sorted(store.writes) == [("a", Usage(memories=2)), ("b", ONE)]


async def test_a_failed_increment_fails_each_of_its_counts_and_not_the_next() -> None:
    store = SlowCounters()
    store.fail = True
    counts = CoalescedCounts(store.add)
    waiting = [asyncio.create_task(counts.add("t", ONE)) for _ in range(3)]
    store.release.set()
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    store.fail = False
    await counts.add("t", ONE)
    assert store.writes == [("t", ONE)]
