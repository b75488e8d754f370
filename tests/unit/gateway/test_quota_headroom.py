"""Far below its limits a tenant's counters are read once a second, not once a write; near a
limit, or once the memo is older, every write reads them."""

from __future__ import annotations

import pytest

from engram_gateway.domain.headroom import far_below, margin
from engram_gateway.domain.quotas import Usage
from engram_gateway.service.quotas import Quotas
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

T = "tnt_a"
ONE = Usage(memories=1)


class Counters:
    """Usage counters in memory, counting their reads."""

    def __init__(self, used: int = 0) -> None:
        self.used_now = Usage(memories=used)
        self.reads = 0

    async def used(self, tenant_id: str) -> Usage:
        self.reads += 1
        return self.used_now

    async def add(self, tenant_id: str, amount: Usage) -> None:
        self.used_now = self.used_now.plus(amount)

    async def overrides(self, tenant_id: str) -> dict[str, int]:
        return {}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def quotas(counters: Counters, limit: int, clock: Clock) -> Quotas:
    return Quotas(counters, Usage(memories=limit), clock=clock)


async def test_far_below_the_limit_the_counters_are_read_once_a_second() -> None:
    counters, clock = Counters(), Clock()
    door = quotas(counters, 1_000_000, clock)
    for _ in range(50):
        await door.admit(T, ONE)
        await door.count(T, ONE)
    assert counters.reads == 1
    clock.now = 1.5
    await door.admit(T, ONE)
    assert counters.reads == 2


async def test_near_the_limit_every_write_reads_the_counters() -> None:
    counters, clock = Counters(used=9_000), Clock()
    door = quotas(counters, 10_000, clock)
    for _ in range(3):
        await door.admit(T, ONE)
    assert counters.reads == 3


async def test_this_instances_counts_bring_the_memo_to_the_limit() -> None:
    limit = 10_000
    counters, clock = Counters(used=limit - margin(limit) - 1), Clock()
    door = quotas(counters, limit, clock)
    await door.admit(T, ONE)
    await door.count(T, ONE)
    await door.admit(T, ONE)
    assert counters.reads == 2
    counters.used_now = Usage(memories=limit)
    with pytest.raises(Problem):
        await door.admit(T, ONE)


def test_far_below_asks_only_about_the_quotas_a_write_asks_for() -> None:
    limits = Usage(memories=100, documents=1_000_000)
    assert far_below(limits, Usage(memories=100), Usage(documents=1))
    assert not far_below(limits, Usage(), Usage(memories=1))
