"""Reads of one key asked for while its read is on its way share that read, its answer or its
error; the next read after it goes to the store again."""

from __future__ import annotations

import asyncio
import functools

import pytest

from engram_gateway.domain.single_flight import SingleFlight

pytestmark = pytest.mark.unit


class Store:
    """Rows read only once released, counting the reads."""

    def __init__(self) -> None:
        self.reads = 0
        self.release = asyncio.Event()
        self.fail = False

    async def get(self, key: str) -> str:
        self.reads += 1
        await self.release.wait()
        if self.fail:
            raise ConnectionError("database down")
        return f"row {key}"


async def test_concurrent_reads_of_one_key_share_one_trip() -> None:
    store, reads = Store(), SingleFlight[str]()
    waiting = [asyncio.create_task(reads.read(k, functools.partial(store.get, k))) for k in "aaab"]
    await asyncio.sleep(0)
    store.release.set()
    assert await asyncio.gather(*waiting) == ["row a", "row a", "row a", "row b"]
    assert store.reads == 2
    assert await reads.read("a", lambda: store.get("a")) == "row a"
    assert store.reads == 3


async def test_a_failed_read_fails_each_sharer_and_not_the_next_read() -> None:
    store, reads = Store(), SingleFlight[str]()
    store.fail = True
    waiting = [asyncio.create_task(reads.read("a", lambda: store.get("a"))) for _ in range(3)]
    await asyncio.sleep(0)
    store.release.set()
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results) and store.reads == 1
    store.fail = False
    assert await reads.read("a", lambda: store.get("a")) == "row a"
