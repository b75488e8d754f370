"""Turns between lanes: while interactive batches are coming, the bulk lane handles its batch
in parts and yields to interactive batches in flight, so a bulk load delays an interactive
write by at most one part; alone, a bulk batch goes whole."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from typing import Any

import pytest

from engram_events import Envelope, encode, new_event
from engram_events.catalog import (
    AGENT_DELETED,
    EMBEDDING_COMPUTED,
    EMBEDDING_REQUESTED,
    MEMORY_BULK_WRITE_REQUESTED,
    MEMORY_WRITE_REQUESTED,
    in_lane_of,
)
from engram_events.payloads.embeddings import (
    EmbeddedItem,
    EmbeddingComputed,
    EmbeddingRequested,
    TextItem,
)
from engram_events.payloads.memories import AgentDeleted
from engram_platform.consuming import Outcome
from engram_platform.consuming.turns import LaneTurns
from engram_platform.give_way import bulk_lane, give_way
from engram_platform.idempotency import APPLIED
from engram_platform.outbox.staging import OUTBOX
from engram_platform.runtime import Runtime
from engram_platform.settings import ServiceSettings
from tests.unit.platform.test_consumer_batch import Record
from tests.unit.platform.test_consumer_lanes import PREFIX, Handlers, Positions, consumer_for, write
from tests.unit.platform.test_producer_batch import PROVENANCE

pytestmark = pytest.mark.unit


class PartsNoted(Handlers):
    """Also notes the size of each batch call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    async def batch(self, events: list[Any]) -> list[Any]:
        self.calls.append(len(events))
        return await super().batch(events)


def bulk(count: int) -> list[Any]:
    return [write(MEMORY_BULK_WRITE_REQUESTED, f"bulk_{i}", i) for i in range(count)]


async def settle() -> None:
    """Let every ready task run a few steps."""
    for _ in range(20):
        await asyncio.sleep(0)


class Clock:
    """Monotonic seconds the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_while_interactive_batches_come_a_bulk_batch_goes_in_parts() -> None:
    handlers = PartsNoted()
    consumer, _ = consumer_for(handlers)
    clock = Clock()
    consumer.turns = LaneTurns(bulk_part=2, recent=5.0, clock=clock)
    with consumer.turns.interactive():
        pass
    clock.now += 4.0
    assert await consumer.process_batch(bulk(5)) == [Outcome.APPLIED] * 5
    assert handlers.calls == [2, 2, 1]


async def test_with_no_interactive_batch_lately_a_bulk_batch_goes_whole() -> None:
    handlers = PartsNoted()
    consumer, _ = consumer_for(handlers)
    clock = Clock()
    consumer.turns = LaneTurns(bulk_part=2, recent=5.0, clock=clock)
    assert await consumer.process_batch(bulk(5)) == [Outcome.APPLIED] * 5
    with consumer.turns.interactive():
        pass
    clock.now += 6.0
    assert await consumer.process_batch(bulk(3)) == [Outcome.APPLIED] * 3
    assert handlers.calls == [5, 3]


async def test_an_interactive_batch_is_never_cut_into_parts() -> None:
    handlers = PartsNoted()
    consumer, _ = consumer_for(handlers)
    consumer.turns = LaneTurns(bulk_part=2)
    records = [write(MEMORY_WRITE_REQUESTED, f"single_{i}", i) for i in range(5)]
    await consumer.process_batch(records)
    assert handlers.calls == [5]


async def test_the_bulk_lane_waits_while_an_interactive_batch_is_in_flight() -> None:
    handlers = Handlers()
    consumer, _ = consumer_for(handlers)
    consumer.turns = LaneTurns(bulk_part=2, max_wait=60)
    with consumer.turns.interactive():
        loading = asyncio.create_task(consumer.process_batch(bulk(4)))
        await settle()
        assert handlers.handled == []
        assert not loading.done()
    assert await loading == [Outcome.APPLIED] * 4
    assert handlers.handled == ["bulk_0", "bulk_1", "bulk_2", "bulk_3"]
    assert consumer.turns.yielded == 1


async def test_an_interactive_stream_cannot_starve_a_bulk_load() -> None:
    handlers = Handlers()
    consumer, _ = consumer_for(handlers)
    consumer.turns = LaneTurns(bulk_part=2, max_wait=0.001)
    with consumer.turns.interactive():
        assert await consumer.process_batch(bulk(4)) == [Outcome.APPLIED] * 4
    assert consumer.turns.yielded == 2


async def test_the_interactive_lanes_subscriber_marks_its_batches_in_flight() -> None:
    seen: list[bool] = []

    class Noting(Handlers):
        async def batch(self, events: list[Any]) -> list[Any]:
            seen.append(consumer.turns.interactive_in_flight)
            return await super().batch(events)

    consumer, broker = consumer_for(Noting())
    consumer.subscribe()
    lanes = dict(broker.handlers)
    interactive = next(h for topics, h in lanes.items() if "memories.v1" in topics[0])
    bulk_lane = next(h for topics, h in lanes.items() if "memories-bulk" in topics[0])
    await interactive(Message(write(MEMORY_WRITE_REQUESTED, "single", 0)))
    await bulk_lane(Message(bulk(1)[0]))
    assert seen == [True, False]
    assert not consumer.turns.interactive_in_flight
    assert consumer.turns.part_size() == consumer.turns.bulk_part


async def test_events_the_service_ignores_are_no_interactive_traffic() -> None:
    consumer, broker = consumer_for(Handlers())
    consumer.subscribe()
    interactive = next(h for topics, h in broker.handlers if "memories.v1" in topics[0])
    unrouted = new_event(AGENT_DELETED, AgentDeleted(agent_id="agt_1"), tenant_id="ten_1")
    record = Record(encode(unrouted), topic=f"{PREFIX}engram.memories.v1", offset=0)
    await interactive(Message(record))
    assert consumer.turns.part_size() is None, "a bulk load's own answers cut it into parts"


class Message:
    """What the subscriber hands the consumer: one raw record."""

    def __init__(self, record: Any) -> None:
        self.raw_message = record
        self.consumer = Positions()


class Working(PartsNoted):
    """Each batch call takes 30 ms of the test's clock."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock

    async def batch(self, events: list[Any]) -> list[Any]:
        self.clock.now += 0.030
        return await super().batch(events)


class Rests:
    """Notes each rest the bulk lane takes, and moves the clock past it."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.taken: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.taken.append(round(seconds, 4))
        self.clock.now += seconds


def paced(share: float) -> tuple[Any, Working, Rests, Clock]:
    """A consumer whose handlers take clock time and whose bulk lane runs at `share`."""
    clock = Clock()
    handlers = Working(clock)
    consumer, _ = consumer_for(handlers)
    rests = Rests(clock)
    consumer.turns = LaneTurns(bulk_part=2, bulk_share=share, clock=clock, sleep=rests)
    return consumer, handlers, rests, clock


async def test_while_interactive_batches_come_the_bulk_lane_rests_for_its_share() -> None:
    consumer, handlers, rests, _ = paced(0.75)
    with consumer.turns.interactive():
        pass
    assert await consumer.process_batch(bulk(6)) == [Outcome.APPLIED] * 6
    assert handlers.calls == [2, 2, 2]
    assert rests.taken == [0.01, 0.01, 0.01]
    assert consumer.turns.rested == pytest.approx(0.03)


async def test_alone_the_bulk_lane_never_rests() -> None:
    consumer, handlers, rests, _ = paced(0.5)
    assert await consumer.process_batch(bulk(6)) == [Outcome.APPLIED] * 6
    assert handlers.calls == [6]
    assert rests.taken == []


async def test_the_wait_for_the_next_fetch_is_not_counted_as_bulk_work() -> None:
    consumer, _, rests, clock = paced(0.5)
    with consumer.turns.interactive():
        pass
    await consumer.process_batch(bulk(2))
    clock.now += 2.0
    await consumer.process_batch(bulk(2))
    assert rests.taken == [0.03, 0.03]


def test_a_share_of_one_is_the_default_and_a_share_is_bounded() -> None:
    assert LaneTurns().bulk_share == 1.0
    assert LaneTurns(bulk_share=0.0001).bulk_share == 0.05


async def test_the_runtime_gives_its_consumer_the_configured_bulk_share() -> None:
    settings = ServiceSettings(
        tracing_enabled=False, metrics_enabled=False, consumer_bulk_share=0.6
    )
    runtime = Runtime.build("probe", settings, install_global=False)
    async with runtime.connected() as connected:
        assert connected.consumer.turns.bulk_share == 0.6


class Asking(Handlers):
    """Answers each single write with a request for its vector, as memory's first pass does."""

    async def batch(self, events: list[Envelope[Any]]) -> list[Any]:
        await super().batch(events)
        return [[self.request(e)] for e in events]

    @staticmethod
    def request(event: Envelope[Any]) -> Envelope[Any]:
        """The vector request in the write's own lane."""
        memory_id = event.payload.memory_id
        request = EmbeddingRequested(
            request_id=memory_id,
            requester="memory",
            purpose="memory",
            items=[TextItem(item_id=memory_id, text="hi")],
        )
        kind = in_lane_of(EMBEDDING_REQUESTED, event.event_type)
        return new_event(kind, request, tenant_id="ten_1")


def answer(memory_id: str, offset: int) -> Record:
    """The embedding service's answer to an `Asking` request."""
    payload = EmbeddingComputed(
        request_id=memory_id,
        requester="memory",
        purpose="memory",
        items=[EmbeddedItem(item_id=memory_id, vector=[1.0, 0.0])],
        provenance=PROVENANCE,
    )
    event = new_event(EMBEDDING_COMPUTED, payload, tenant_id="ten_1")
    return Record(encode(event), topic=f"{PREFIX}{EMBEDDING_COMPUTED.topic}", offset=offset)


async def taken(event: Envelope[Any]) -> list[Envelope[Any]]:
    """Takes an answer and publishes nothing."""
    return []


def asking_consumer(answer_wait: float) -> tuple[Any, Asking]:
    """A consumer whose single writes ask for vectors, and which takes the answers."""
    handlers = Asking()
    consumer, _ = consumer_for(handlers)
    consumer.on(EMBEDDING_COMPUTED, taken)
    consumer.turns = LaneTurns(bulk_part=2, max_wait=60, answer_wait=answer_wait)
    return consumer, handlers


async def test_the_bulk_lane_waits_for_the_answer_to_a_single_writes_request() -> None:
    consumer, handlers = asking_consumer(answer_wait=60)
    single = write(MEMORY_WRITE_REQUESTED, "single", 0)
    await consumer.handle_fetch([single], interactive=True)
    assert consumer.turns.awaiting_answers == 1
    loading = asyncio.create_task(consumer.process_batch(bulk(2)))
    await settle()
    assert handlers.handled == ["single"], "the bulk lane went while the vector was computed"
    await consumer.handle_fetch([answer("single", 1)], interactive=True)
    assert await loading == [Outcome.APPLIED] * 2
    assert handlers.handled == ["single", "bulk_0", "bulk_1"]
    assert consumer.turns.awaiting_answers == 0


async def test_a_lost_answer_holds_the_bulk_lane_for_at_most_the_answer_wait() -> None:
    consumer, handlers = asking_consumer(answer_wait=0.01)
    await consumer.handle_fetch([write(MEMORY_WRITE_REQUESTED, "single", 0)], interactive=True)
    assert await consumer.process_batch(bulk(2)) == [Outcome.APPLIED] * 2
    assert handlers.handled == ["single", "bulk_0", "bulk_1"]
    assert consumer.turns.awaiting_answers == 0


async def test_a_bulk_batchs_own_requests_hold_nothing() -> None:
    consumer, _ = asking_consumer(answer_wait=60)
    handled = await consumer.handle_fetch([write(MEMORY_BULK_WRITE_REQUESTED, "bulk", 0)])
    assert handled.requests == 0
    assert consumer.turns.awaiting_answers == 0


async def test_the_bulk_lane_goes_once_every_awaited_answer_came() -> None:
    turns = LaneTurns(max_wait=60, answer_wait=60)
    turns.expect_answers(2)
    with bulk_lane(turns):
        waiting = asyncio.create_task(give_way())
    turns.answered(1)
    await settle()
    assert turns.awaiting_answers == 1
    assert not waiting.done()
    turns.answered(1)
    await settle()
    assert waiting.done()


async def test_a_bulk_parts_events_wait_for_a_single_write_that_came_meanwhile() -> None:
    arrived = ExitStack()

    class Interrupted(Asking):
        """A single write's batch starts while the bulk part is being handled."""

        async def batch(self, events: list[Envelope[Any]]) -> list[Any]:
            arrived.enter_context(consumer.turns.interactive())
            return await super().batch(events)

    consumer, _ = consumer_for(Interrupted())
    consumer.turns = LaneTurns(bulk_part=2, max_wait=60)
    with bulk_lane(consumer.turns):
        loading = asyncio.create_task(consumer.process_batch(bulk(2)))
    await settle()
    assert not loading.done()
    db = consumer.outbox.db
    assert db[OUTBOX].docs == {}, "staged beside the single write"
    assert db[APPLIED].docs == {}, "marked beside the single write"
    arrived.close()
    assert await loading == [Outcome.APPLIED] * 2
    assert db[OUTBOX].docs
    assert len(db[APPLIED].docs) == 2


async def test_answers_alone_hold_a_bulk_part_for_at_most_the_answer_budget() -> None:
    handlers = Handlers()
    consumer, _ = consumer_for(handlers)
    consumer.turns = LaneTurns(bulk_part=2, max_wait=60, answer_wait=60, answer_budget=0.01)
    consumer.turns.expect_answers(1)
    loading = consumer.process_batch(bulk(4))
    assert await asyncio.wait_for(loading, 5) == [Outcome.APPLIED] * 4
    assert handlers.handled == ["bulk_0", "bulk_1", "bulk_2", "bulk_3"]
    assert consumer.turns.awaiting_answers == 1, "the answer never came; the load went on"


async def test_the_answer_budget_runs_out_under_a_clock_that_never_moves() -> None:
    """The budget counts the waits that ran out, not only the clock the turns were given."""
    turns = LaneTurns(max_wait=60, answer_wait=60, answer_budget=0.01, clock=Clock())
    turns.expect_answers(1)
    with bulk_lane(turns):
        await asyncio.wait_for(give_way(), 1)
        await asyncio.wait_for(give_way(), 1)
    assert turns.awaiting_answers == 1, "the answer never came; the part went on"
