"""The move any store shares: writes counted while no target exists, so a walk waits for them."""

from __future__ import annotations

import asyncio

import pytest

from engram_embedders import HashingEmbedder
from engram_embedders.moving import Embedded, Moving

pytestmark = pytest.mark.unit


async def test_a_walk_waits_for_writes_begun_before_the_target_existed() -> None:
    moving: Moving[str] = Moving(Embedded(HashingEmbedder(dimension=8), "old"))
    release = asyncio.Event()
    landed: list[list[str]] = []

    async def write(spaces: list[Embedded[str]]) -> None:
        await release.wait()
        landed.append([space.vectors for space in spaces])

    early = asyncio.create_task(moving.track(write))
    await asyncio.sleep(0)
    moving.begin(Embedded(HashingEmbedder(dimension=4), "new"))
    late = asyncio.create_task(moving.track(write))
    settled = asyncio.create_task(moving.settled())
    await asyncio.sleep(0.01)
    assert not settled.done(), "the early write saw no target and has not ended"
    release.set()
    await asyncio.gather(early, late, settled)
    assert sorted(landed) == [["old"], ["old", "new"]]
    moving.switch()
    assert moving.space()[1] == "new" and moving.reembeds and moving.spaces()[0].vectors == "new"
