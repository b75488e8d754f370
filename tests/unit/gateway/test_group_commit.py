"""Items submitted while a trip is on its way go together in the next; each caller gets its own
result, and a failed trip fails its own callers only."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from engram_gateway.domain.group_commit import GroupCommit

pytestmark = pytest.mark.unit


class HeldWrites:
    """Trips held until released; each item's result is the item doubled."""

    def __init__(self) -> None:
        self.trips: list[list[int]] = []
        self.release = asyncio.Event()
        self.fail_next = False

    async def write(self, items: Sequence[int]) -> list[int]:
        self.trips.append(list(items))
        await self.release.wait()
        if self.fail_next:
            self.fail_next = False
            raise ConnectionError("database down")
        return [2 * item for item in items]


async def test_items_behind_a_trip_on_its_way_go_together_and_each_gets_its_own_result() -> None:
    store = HeldWrites()
    commit = GroupCommit(store.write)
    first = asyncio.create_task(commit.submit(1))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    later = [asyncio.create_task(commit.submit(n)) for n in (2, 3, 4)]
    await asyncio.sleep(0)
    assert store.trips == [[1]] and not any(t.done() for t in [first, *later])
    store.release.set()
    assert await asyncio.gather(first, *later) == [2, 4, 6, 8]
    assert store.trips == [[1], [2, 3, 4]]


async def test_a_failed_trip_fails_its_callers_and_the_next_trip_goes_on() -> None:
    store = HeldWrites()
    store.fail_next = True
    commit = GroupCommit(store.write)
    failing = [asyncio.create_task(commit.submit(n)) for n in (1, 2)]
    while not store.trips:
        await asyncio.sleep(0)
    following = asyncio.create_task(commit.submit(3))
    store.release.set()
    results = await asyncio.gather(*failing, return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    assert await following == 6
    assert store.trips == [[1, 2], [3]]


async def test_a_lone_item_is_written_at_once() -> None:
    store = HeldWrites()
    store.release.set()
    assert await GroupCommit(store.write).submit(5) == 10
    assert store.trips == [[5]]
