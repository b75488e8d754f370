"""Yield points inside a bulk batch: on the bulk lane a long stretch waits for an interactive
batch in flight and lets the loop run every few milliseconds while single writes are coming;
a bulk load alone, and any other code, never pauses at them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engram_events.catalog import MEMORY_BULK_WRITE_REQUESTED, MEMORY_WRITE_REQUESTED
from engram_platform.consuming.turns import LaneTurns
from engram_platform.give_way import bulk_lane, give_way
from tests.unit.platform.test_consumer_lanes import Handlers, consumer_for, write
from tests.unit.platform.test_lane_turns import Clock, Message, settle

pytestmark = pytest.mark.unit


def returns_without_suspending(coroutine: Any) -> bool:
    """Whether a coroutine finishes on its first step (it never handed the loop back)."""
    try:
        coroutine.send(None)
    except StopIteration:
        return True
    coroutine.close()
    return False


async def test_outside_the_bulk_lane_a_yield_point_returns_at_once() -> None:
    turns = LaneTurns()
    with turns.interactive():
        assert returns_without_suspending(give_way())


async def test_a_bulk_load_alone_never_pauses_at_a_yield_point() -> None:
    clock = Clock()
    turns = LaneTurns(slice_seconds=0.004, clock=clock)
    with bulk_lane(turns):
        clock.now += 1.0
        assert returns_without_suspending(give_way())


async def test_on_the_bulk_lane_a_yield_point_waits_for_an_interactive_batch_in_flight() -> None:
    turns = LaneTurns(max_wait=60)
    with turns.interactive():
        with bulk_lane(turns):
            waiting = asyncio.create_task(give_way())
        await settle()
        assert not waiting.done()
    await settle()
    assert waiting.done()


async def test_beside_recent_single_writes_a_long_stretch_lets_the_loop_run() -> None:
    clock = Clock()
    turns = LaneTurns(slice_seconds=0.004, recent=5.0, clock=clock)
    with turns.interactive():
        pass
    with bulk_lane(turns):
        assert returns_without_suspending(give_way()), "within its slice a stretch goes on"
        clock.now += 0.005
        assert not returns_without_suspending(give_way()), "past it, the loop runs first"


async def test_the_bulk_lanes_subscriber_decodes_nothing_while_an_interactive_batch_runs() -> None:
    handlers = Handlers()
    consumer, broker = consumer_for(handlers)
    consumer.turns = LaneTurns(max_wait=60)
    consumer.subscribe()
    bulk = next(h for topics, h in broker.handlers if "memories-bulk" in topics[0])
    decoded: list[int] = []
    real_decode = consumer.prepare_batch

    async def noting(records: Any) -> Any:
        prepared = await real_decode(records)
        decoded.append(len(records))
        return prepared

    consumer.prepare_batch = noting  # type: ignore[method-assign]
    with consumer.turns.interactive():
        loading = asyncio.create_task(
            bulk(Message(write(MEMORY_BULK_WRITE_REQUESTED, "bulk_0", 0)))
        )
        await settle()
        assert decoded == [] and handlers.handled == []
    await loading
    assert decoded == [1] and handlers.handled == ["bulk_0"]


async def test_the_interactive_lanes_subscriber_never_pauses_at_yield_points() -> None:
    handlers = Handlers()
    consumer, broker = consumer_for(handlers)
    consumer.turns = LaneTurns(max_wait=60)
    consumer.subscribe()
    interactive = next(h for topics, h in broker.handlers if "memories.v1" in topics[0])
    with consumer.turns.interactive():
        await asyncio.wait_for(
            interactive(Message(write(MEMORY_WRITE_REQUESTED, "single", 0))), timeout=5
        )
    assert handlers.handled == ["single"]


async def test_a_steady_interactive_stream_holds_a_part_for_at_most_max_wait() -> None:
    turns = LaneTurns(max_wait=0.01)
    with turns.interactive(), bulk_lane(turns):
        await give_way()
        assert returns_without_suspending(give_way()), "the part's wait is spent: it goes on"
        await turns.bulk_turn()
        assert not returns_without_suspending(give_way()), "the next part may wait again"
