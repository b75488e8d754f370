"""A consumer that keeps no state publishes its events before marking inputs applied."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from engram_events import Envelope, derive_event_id
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_platform.consuming import BatchResult, Consumer, Direct, Outcome
from engram_platform.outbox import Outbox
from engram_platform.retry import RetryPolicy
from engram_platform.sending import KafkaSender
from tests.unit.platform.test_consumer_batch import (
    Database,
    FakeHandlers,
    applied_ids,
    no_sleep,
    record,
    request,
)

pytestmark = pytest.mark.unit


class Batch:
    """An aiokafka record batch: every append fits."""

    def __init__(self) -> None:
        self.messages: list[tuple[bytes, bytes]] = []

    def append(self, *, key: bytes, value: bytes, timestamp: Any, headers: Any) -> object:
        self.messages.append((key, value))
        return object()


@dataclass
class Producer:
    """The aiokafka producer calls `KafkaSender.send_records` makes, writing to a shared log of operations."""

    log: list[str]
    sent: list[str] = field(default_factory=list)
    fails_first: bool = False

    async def partitions_for(self, topic: str) -> set[int]:
        return {0, 1}

    def create_batch(self) -> Batch:
        return Batch()

    async def send_batch(self, batch: Batch, topic: str, *, partition: int) -> Any:
        return self.deliver(batch.messages)

    async def send(
        self, topic: str, value: bytes, *, key: bytes, partition: int, headers: Any
    ) -> Any:
        return self.deliver([(key, value)])

    def deliver(self, messages: list[tuple[bytes, bytes]]) -> Any:
        """Note each message as published; Kafka has taken them."""
        if not self.sent and "failed" not in self.log and self.fails_first:
            self.log.append("failed")
            raise ConnectionError("the broker went away")
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        for _, value in messages:
            self.sent.append(json.loads(value)["event_id"])
            self.log.append("publish")
        return done


class Broker:
    """A broker whose sender sends over the fake above (dead letters are not expected here)."""

    def __init__(self, producer: Producer) -> None:
        self.sender = KafkaSender(producer=producer)


class MarkingDatabase(Database):
    """Logs applied marks, and fails the first `failures` of them (the process dies there)."""

    def __init__(self, log: list[str], failures: int = 0) -> None:
        super().__init__()
        self.log = log
        self.failures = failures

    def __missing__(self, name: str) -> Any:
        collection = super().__missing__(name)
        if name == "applied_events":
            insert = collection.insert_many

            async def marked(docs: list[dict[str, Any]], ordered: bool = True) -> None:
                if self.failures:
                    self.failures -= 1
                    raise ConnectionError("the database went away")
                self.log.append("mark")
                await insert(docs, ordered=ordered)

            collection.insert_many = marked  # type: ignore[method-assign]
        return collection


def direct_consumer(
    db: Database,
    producer: Producer,
    handlers: FakeHandlers | None = None,
    every: int | None = None,
    record_applied: bool = True,
) -> Consumer:
    handlers = handlers or FakeHandlers({})
    consumer = Consumer(
        service="embedding",
        broker=Broker(producer),  # type: ignore[arg-type]
        db=db,
        outbox=Outbox(db),
        delivery=Direct(every=every, record_applied=record_applied),
        retry=RetryPolicy(max_attempts=3),
        sleep=no_sleep,
    )
    consumer.on(MEMORY_WRITE_REQUESTED, handlers.single, batch=handlers.batch)
    return consumer


async def test_events_are_published_before_the_inputs_are_marked_and_nothing_is_staged() -> None:
    log: list[str] = []
    db, producer = MarkingDatabase(log), Producer(log)
    consumer = direct_consumer(db, producer)
    events = [request(n) for n in range(3)]
    outcomes = await consumer.process_batch([record(e, i) for i, e in enumerate(events)])
    assert outcomes == [Outcome.APPLIED] * 3
    assert sorted(producer.sent) == sorted(
        str(derive_event_id(e.event_id, "follow-up")) for e in events
    )
    assert log == ["publish"] * 3 + ["mark"]
    assert applied_ids(db) == {str(e.event_id) for e in events}
    assert consumer.outbox.staged == {}
    assert db["outbox"].docs == {}


async def test_a_crash_before_the_marks_publishes_the_same_event_ids_again_on_replay() -> None:
    log: list[str] = []
    db, producer = MarkingDatabase(log, failures=1), Producer(log)
    consumer = direct_consumer(db, producer)
    batch = [record(request(n), n) for n in range(2)]
    with pytest.raises(ConnectionError):
        await consumer.process_batch(batch)
    first = list(producer.sent)
    assert applied_ids(db) == set()
    replayed = await direct_consumer(db, producer).process_batch(batch)
    again = await direct_consumer(db, producer).process_batch(batch)
    assert replayed == [Outcome.APPLIED] * 2
    assert again == [Outcome.DUPLICATE] * 2
    assert producer.sent == first + first


class PacedHandlers(FakeHandlers):
    """A batch handler that logs each call and yields to the loop while it works."""

    def __init__(self, log: list[str]) -> None:
        super().__init__({})
        self.log = log

    async def batch(self, events: list[Envelope[Any]]) -> list[BatchResult]:
        self.log.append(f"handle {len(events)}")
        for _ in range(10):
            await asyncio.sleep(0)
        return await super().batch(events)


def paced_consumer(db: Database, producer: Producer, log: list[str]) -> Consumer:
    return direct_consumer(db, producer, PacedHandlers(log), every=2)


async def test_with_every_each_part_is_published_while_the_next_is_handled() -> None:
    log: list[str] = []
    db, producer = MarkingDatabase(log), Producer(log)
    consumer = paced_consumer(db, producer, log)
    events = [request(n) for n in range(5)]
    outcomes = await consumer.process_batch([record(e, i) for i, e in enumerate(events)])
    assert outcomes == [Outcome.APPLIED] * 5
    assert [entry for entry in log if entry.startswith("handle")] == [
        "handle 2",
        "handle 2",
        "handle 1",
    ]
    assert log.index("publish") < log.index("handle 1")
    assert log.count("publish") == 5
    assert log[-1] == "mark"
    assert applied_ids(db) == {str(e.event_id) for e in events}


async def test_with_every_a_failed_part_fails_the_batch_and_marks_nothing() -> None:
    log: list[str] = []
    db, producer = MarkingDatabase(log), Producer(log, fails_first=True)
    consumer = paced_consumer(db, producer, log)
    batch = [record(request(n), n) for n in range(5)]
    with pytest.raises(ConnectionError):
        await consumer.process_batch(batch)
    assert "mark" not in log
    assert applied_ids(db) == set()
    replayed = await paced_consumer(db, producer, log).process_batch(batch)
    assert replayed == [Outcome.APPLIED] * 5


async def test_a_look_ahead_route_hears_every_input_of_its_type_before_the_first_run() -> None:
    log: list[str] = []
    db, producer = MarkingDatabase(log), Producer(log)
    consumer = paced_consumer(db, producer, log)
    told: list[list[str]] = []

    def ahead(upcoming: list[Envelope[Any]]) -> None:
        log.append("ahead")
        told.append([e.payload.memory_id for e in upcoming])

    handlers = PacedHandlers(log)
    consumer.on(MEMORY_WRITE_REQUESTED, handlers.single, batch=handlers.batch, ahead=ahead)
    events = [request(n) for n in range(5)]
    outcomes = await consumer.process_batch([record(e, i) for i, e in enumerate(events)])
    assert outcomes == [Outcome.APPLIED] * 5
    assert log[0] == "ahead" and log.count("ahead") == 1
    assert told == [[e.payload.memory_id for e in events]]


async def test_a_failing_look_ahead_is_only_a_lost_hint() -> None:
    log: list[str] = []
    db, producer = MarkingDatabase(log), Producer(log)
    consumer = paced_consumer(db, producer, log)

    def ahead(upcoming: list[Envelope[Any]]) -> None:
        raise ValueError("cannot plan")

    handlers = PacedHandlers(log)
    consumer.on(MEMORY_WRITE_REQUESTED, handlers.single, batch=handlers.batch, ahead=ahead)
    outcomes = await consumer.process_batch([record(request(n), n) for n in range(3)])
    assert outcomes == [Outcome.APPLIED] * 3
    assert log[-1] == "mark"


async def test_without_records_a_replay_recomputes_and_resends_the_same_ids() -> None:
    log: list[str] = []
    db, producer = MarkingDatabase(log), Producer(log)
    consumer = direct_consumer(db, producer, record_applied=False)
    batch = [record(request(n), n) for n in range(2)]
    first = await consumer.process_batch(batch)
    sent = list(producer.sent)
    again = await consumer.process_batch(batch)
    assert first == again == [Outcome.APPLIED] * 2
    assert producer.sent == sent + sent
    assert "mark" not in log
    assert db["applied_events"].docs == {}
