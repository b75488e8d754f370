"""A database outage mid-batch redelivers the batch; only a fault of the message is dead-lettered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pymongo.errors import ServerSelectionTimeoutError

from engram_events import encode, new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.payloads.memories import MemoryWriteRequested
from engram_platform.consuming import Consumer, Outcome
from engram_platform.outbox import Outbox
from engram_platform.retry import RetryPolicy
from tests.support.parked import InMemoryParkedInputs

pytestmark = pytest.mark.unit


class Collection:
    """The few collection calls the consumer makes, over a dict."""

    def __init__(self) -> None:
        self.docs: dict[str, Any] = {}

    async def find_one(self, query: dict[str, Any], projection: Any = None) -> Any:
        return self.docs.get(query["_id"])

    async def find(self, query: dict[str, Any], projection: Any = None) -> AsyncIterator[Any]:
        for key in query["_id"]["$in"]:
            if key in self.docs:
                yield self.docs[key]

    async def insert_many(self, docs: list[dict[str, Any]], ordered: bool = True) -> None:
        self.docs.update({d["_id"]: d for d in docs})


class Database(dict[str, Collection]):
    def __missing__(self, name: str) -> Collection:
        self[name] = Collection()
        return self[name]


@dataclass
class Broker:
    """Records what its sender would send to Kafka (here: only the DLQ)."""

    published: list[str] = field(default_factory=list)

    @property
    def sender(self) -> Broker:
        return self

    async def send(self, entries: list[dict[str, Any]]) -> None:
        self.published.extend(entry["topic"] for entry in entries)


@dataclass
class Record:
    value: bytes
    topic: str = "engram.memories.v1"
    partition: int = 0
    offset: int = 7
    key: bytes = b"agt_1"
    headers: tuple[Any, ...] = ()


async def no_sleep(seconds: float) -> None:
    return None


class Clock:
    """The parked lane's time, moved by the test."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def consumer_with(error: Exception) -> tuple[Consumer, Broker, Database]:
    broker, db = Broker(), Database()
    consumer = Consumer(
        service="memory",
        broker=broker,  # type: ignore[arg-type]  # a fake of the calls the consumer makes
        db=db,
        outbox=Outbox(db),
        retry=RetryPolicy(max_attempts=3),
        sleep=no_sleep,
        parked=InMemoryParkedInputs(),
        clock=Clock(),
    )

    async def handler(event: Any) -> list[Any]:
        raise error

    consumer.on(MEMORY_WRITE_REQUESTED, handler)
    return consumer, broker, db


def a_record() -> Record:
    payload = MemoryWriteRequested(memory_id="mem_1", agent_id="agt_1", content="hello")
    return Record(encode(new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id="ten_1")))


async def test_database_outage_raises_for_redelivery_and_dead_letters_nothing() -> None:
    consumer, broker, db = consumer_with(ServerSelectionTimeoutError("no servers"))
    with pytest.raises(ServerSelectionTimeoutError):
        await consumer.process_batch([a_record()])
    assert broker.published == []
    assert db["applied_events"].docs == {}


async def test_a_failing_handler_is_still_dead_lettered_after_its_retries() -> None:
    consumer, broker, _ = consumer_with(RuntimeError("bug"))
    assert await consumer.process_batch([a_record()]) == [Outcome.PARKED]
    assert consumer.parked_lane is not None
    clock = consumer.parked_lane.lot.clock
    assert isinstance(clock, Clock)
    for _ in range(2):
        assert broker.published == []
        clock.now += timedelta(minutes=1)
        await consumer.parked_lane.retrier.run_due()
    assert broker.published == ["engram.dlq.v1"]
