"""The bulk lane: read by a subscriber of its own, and handled after a fetch's other inputs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from engram_events import Envelope, decode, encode, new_event
from engram_events.catalog import (
    EMBEDDING_BULK_COMPUTED,
    EMBEDDING_COMPUTED,
    MEMORY_BULK_WRITE_REQUESTED,
    MEMORY_WRITE_REQUESTED,
)
from engram_events.payloads.memories import MemoryWriteRequested
from engram_platform.consuming import BatchResult, Consumer, Outcome
from engram_platform.consuming.delivery import Pipelined
from engram_platform.outbox import Outbox
from engram_platform.runtime import Runtime
from engram_platform.settings import ServiceSettings
from tests.support.parked import InMemoryParkedInputs
from tests.unit.platform.test_consumer_batch import Broker, Database, Record, no_sleep

pytestmark = pytest.mark.unit
PREFIX = "t1."


@dataclass
class SubscribingBroker(Broker):
    """Also records each subscriber the consumer asks for."""

    subscribed: list[tuple[tuple[str, ...], str]] = field(default_factory=list)
    handlers: list[tuple[tuple[str, ...], Callable[[Any], Any]]] = field(default_factory=list)
    options: list[dict[str, Any]] = field(default_factory=list)

    def subscriber(self, *topics: str, group_id: str, **options: Any) -> Callable[[Any], Any]:
        self.subscribed.append((topics, group_id))
        self.options.append(options)

        def keep(handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
            self.handlers.append((topics, handler))
            return handler

        return keep


class Handlers:
    """Notes the order in which memories are handled."""

    def __init__(self) -> None:
        self.handled: list[str] = []

    async def batch(self, events: list[Envelope[Any]]) -> list[BatchResult]:
        self.handled.extend(e.payload.memory_id for e in events)
        return [[] for _ in events]

    async def single(self, event: Envelope[Any]) -> list[Envelope[Any]]:
        self.handled.append(event.payload.memory_id)
        return []


def consumer_for(handlers: Handlers) -> tuple[Consumer, SubscribingBroker]:
    broker, db = SubscribingBroker(), Database()
    consumer = Consumer(
        service="memory",
        broker=broker,  # type: ignore[arg-type]  # a fake of the calls the consumer makes
        db=db,
        outbox=Outbox(db),
        topic_prefix=PREFIX,
        sleep=no_sleep,
        parked=InMemoryParkedInputs(),
    )
    for kind in (MEMORY_WRITE_REQUESTED, MEMORY_BULK_WRITE_REQUESTED):
        consumer.on(kind, handlers.single, batch=handlers.batch)
    return consumer, broker


def write(kind: Any, memory_id: str, offset: int) -> Record:
    payload = MemoryWriteRequested(memory_id=memory_id, agent_id="agt_1", content="hi")
    event = new_event(kind, payload, tenant_id="ten_1")
    return Record(encode(event), topic=f"{PREFIX}{kind.topic}", offset=offset)


def test_each_lane_has_a_subscriber_of_its_own_in_the_services_group() -> None:
    consumer, broker = consumer_for(Handlers())
    consumer.on(EMBEDDING_COMPUTED, Handlers().single)
    consumer.on(EMBEDDING_BULK_COMPUTED, Handlers().single)
    consumer.subscribe()
    assert sorted(broker.subscribed) == [
        (
            (f"{PREFIX}engram.embeddings-bulk.v1", f"{PREFIX}engram.memories-bulk.v1"),
            consumer.group_id,
        ),
        ((f"{PREFIX}engram.embeddings.v1", f"{PREFIX}engram.memories.v1"), consumer.group_id),
    ]


def test_every_lane_heartbeats_its_group_at_the_configured_interval() -> None:
    consumer, broker = consumer_for(Handlers())
    consumer.heartbeat_ms = 700
    consumer.subscribe()
    assert [o["heartbeat_interval_ms"] for o in broker.options] == [700, 700]


async def test_the_runtime_gives_its_consumer_the_configured_heartbeat() -> None:
    settings = ServiceSettings(
        tracing_enabled=False, metrics_enabled=False, consumer_heartbeat_ms=800
    )
    assert (
        ServiceSettings(tracing_enabled=False, metrics_enabled=False).consumer_heartbeat_ms == 500
    )
    runtime = Runtime.build("probe", settings, install_global=False)
    async with runtime.connected() as connected:
        assert connected.consumer.heartbeat_ms == 800


def test_a_consumer_without_a_bulk_lane_keeps_one_subscriber() -> None:
    handlers = Handlers()
    broker, db = SubscribingBroker(), Database()
    consumer = Consumer(service="gateway", broker=broker, db=db, outbox=Outbox(db))  # type: ignore[arg-type]
    consumer.on(MEMORY_WRITE_REQUESTED, handlers.single)
    consumer.subscribe()
    assert broker.subscribed == [(("engram.memories.v1",), consumer.group_id)]


async def test_a_fetchs_interactive_inputs_are_handled_before_its_bulk_ones() -> None:
    handlers = Handlers()
    consumer, _ = consumer_for(handlers)
    records = [
        write(MEMORY_BULK_WRITE_REQUESTED, "bulk_1", 0),
        write(MEMORY_BULK_WRITE_REQUESTED, "bulk_2", 1),
        write(MEMORY_WRITE_REQUESTED, "single_1", 0),
        write(MEMORY_BULK_WRITE_REQUESTED, "bulk_3", 2),
    ]
    outcomes = await consumer.process_batch(records)
    assert outcomes == [Outcome.APPLIED] * 4
    assert handlers.handled == ["single_1", "bulk_1", "bulk_2", "bulk_3"]


class Positions:
    """The aiokafka calls an overlapped fetch makes: commits noted, seeks ignored."""

    def __init__(self) -> None:
        self.committed: list[dict[Any, int]] = []

    async def commit(self, offsets: dict[Any, int]) -> None:
        self.committed.append(offsets)

    def seek(self, partition: Any, offset: int) -> None:
        return None


class Fetched:
    """A fetch as the subscriber hands it over."""

    def __init__(self, record: Record, positions: Positions) -> None:
        self.raw_message = (record,)
        self.consumer = positions


async def test_a_pipelined_consumers_lanes_complete_their_fetches_apart() -> None:
    bulk_may_finish = asyncio.Event()
    handled: list[str] = []

    async def handle(event: Envelope[Any]) -> list[Envelope[Any]]:
        if event.event_type == MEMORY_BULK_WRITE_REQUESTED.name:
            await bulk_may_finish.wait()
        handled.append(event.payload.memory_id)
        return []

    broker, db = SubscribingBroker(), Database()
    consumer = Consumer(
        service="embedding",
        broker=broker,  # type: ignore[arg-type]  # a fake of the calls the consumer makes
        db=db,
        outbox=Outbox(db),
        topic_prefix=PREFIX,
        delivery=Pipelined(every=10),
        sleep=no_sleep,
    )
    for kind in (MEMORY_WRITE_REQUESTED, MEMORY_BULK_WRITE_REQUESTED):
        consumer.on(kind, handle)
    consumer.subscribe()
    assert len(broker.handlers) == 2 and len(consumer.fetches) == 2
    readers = {topics[0].removeprefix(PREFIX): reader for topics, reader in broker.handlers}
    bulk_positions, interactive_positions = Positions(), Positions()
    await readers["engram.memories-bulk.v1"](
        Fetched(write(MEMORY_BULK_WRITE_REQUESTED, "bulk_1", 0), bulk_positions)
    )
    await readers["engram.memories.v1"](
        Fetched(write(MEMORY_WRITE_REQUESTED, "single_1", 0), interactive_positions)
    )
    for _ in range(20):
        await asyncio.sleep(0)
    assert handled == ["single_1"], "the interactive fetch did not wait for the bulk one"
    assert interactive_positions.committed and not bulk_positions.committed
    bulk_may_finish.set()
    await consumer.drain()
    assert handled == ["single_1", "bulk_1"]
    assert bulk_positions.committed


async def test_a_lanes_fetch_is_marked_and_committed_while_the_next_is_handled() -> None:
    consumer, broker = consumer_for(Handlers())
    second_handled = asyncio.Event()
    mark_many = consumer.applied.mark_many

    async def marking_after_the_second(applied: Any) -> None:
        await second_handled.wait()
        await mark_many(applied)

    async def noting(events: list[Envelope[Any]]) -> list[BatchResult]:
        if events[0].payload.memory_id == "m2":
            second_handled.set()
        return [[] for _ in events]

    consumer.applied.mark_many = marking_after_the_second  # type: ignore[method-assign]
    consumer.routes.batch[MEMORY_WRITE_REQUESTED.name] = noting
    consumer.subscribe()
    interactive = next(reader for topics, reader in broker.handlers if "memories.v1" in topics[0])
    positions = Positions()
    first, second = write(MEMORY_WRITE_REQUESTED, "m1", 0), write(MEMORY_WRITE_REQUESTED, "m2", 1)
    await interactive(Fetched(first, positions))
    assert not positions.committed
    async with asyncio.timeout(5):
        await interactive(Fetched(second, positions))
        await consumer.drain()
    ids = [str(decode(r.value).event_id) for r in (first, second)]
    assert await consumer.applied.seen_many(ids) == set(ids)
    assert [list(c.values()) for c in positions.committed] == [[1], [2]]
