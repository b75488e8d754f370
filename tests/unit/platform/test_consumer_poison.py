"""One poison input in a batch holds up neither the batch nor the inputs behind it."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.errors import AutoReconnect, BulkWriteError, WriteError

from engram_events import Envelope
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_platform.consuming import BatchResult, Consumer, Outcome
from engram_platform.outbox import Outbox
from engram_platform.retry import RetryPolicy
from tests.unit.platform.test_consumer_batch import (
    Broker,
    Database,
    FakeHandlers,
    record,
    request,
)

pytestmark = pytest.mark.unit
DOTTED = WriteError("invalid key: 'a.b' (key must not contain '.' sign)", code=2)


class Sleeps:
    """A sleep that only notes how long it was asked for."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


class PoisonHandlers(FakeHandlers):
    """The batch call fails whole when any input is poison; alone, only the poison fails."""

    def __init__(self, poison: str, error: BaseException) -> None:
        super().__init__({})
        self.poison = poison
        self.error = error

    async def batch(self, events: list[Envelope[Any]]) -> list[BatchResult]:
        self.calls.append(("batch", [e.payload.memory_id for e in events]))
        if any(e.payload.memory_id == self.poison for e in events):
            raise self.error
        return [[] for _ in events]

    async def single(self, event: Envelope[Any]) -> list[Envelope[Any]]:
        self.calls.append(("single", [event.payload.memory_id]))
        if event.payload.memory_id == self.poison:
            raise self.error
        return []


def consumer_for(handlers: FakeHandlers, sleeps: Sleeps) -> tuple[Consumer, Broker]:
    broker, db = Broker(), Database()
    consumer = Consumer(
        service="memory",
        broker=broker,  # type: ignore[arg-type]  # a fake of the calls the consumer makes
        db=db,
        outbox=Outbox(db),
        retry=RetryPolicy(max_attempts=3),
        sleep=sleeps,
    )
    consumer.on(MEMORY_WRITE_REQUESTED, handlers.single, batch=handlers.batch)
    return consumer, broker


async def test_inputs_of_a_batch_one_poison_input_failed_are_retried_at_once() -> None:
    sleeps = Sleeps()
    handlers = PoisonHandlers("mem_1", RuntimeError("the batch write failed"))
    consumer, _ = consumer_for(handlers, sleeps)
    events = [request(n) for n in range(3)]
    outcomes = await consumer.process_batch([record(e, i) for i, e in enumerate(events)])
    assert outcomes == [Outcome.APPLIED, Outcome.DEAD_LETTERED, Outcome.APPLIED]
    assert [c for c in handlers.calls if c != ("single", ["mem_1"])] == [
        ("batch", ["mem_0", "mem_1", "mem_2"]),
        ("single", ["mem_0"]),
        ("single", ["mem_2"]),
    ]
    assert handlers.calls.count(("single", ["mem_1"])) == 3, "the poison alone gets every attempt"
    assert len(sleeps.asked) == 2, "only the poison's own retries wait"


async def test_a_document_the_database_refuses_is_dead_lettered_without_retries() -> None:
    sleeps = Sleeps()
    handlers = PoisonHandlers("mem_0", DOTTED)
    consumer, broker = consumer_for(handlers, sleeps)
    outcomes = await consumer.process_batch([record(request(0))])
    assert outcomes == [Outcome.DEAD_LETTERED]
    assert handlers.calls == [("batch", ["mem_0"]), ("single", ["mem_0"])]
    assert sleeps.asked == []
    (letter,) = broker.letters
    assert letter["error_type"] == "refused_document:WriteError"


async def test_a_database_outage_still_counts_as_each_inputs_first_attempt() -> None:
    sleeps = Sleeps()
    handlers = FakeHandlers({})

    async def away(events: list[Envelope[Any]]) -> list[BatchResult]:
        raise AutoReconnect("the database is away")

    consumer, _ = consumer_for(handlers, sleeps)
    consumer.routes.batch[MEMORY_WRITE_REQUESTED.name] = away
    outcomes = await consumer.process_batch([record(request(0))])
    assert outcomes == [Outcome.APPLIED]
    assert handlers.calls == [("single", ["mem_0"])]
    assert len(sleeps.asked) == 1, "backs off before trying a database that was away"


async def test_a_bulk_write_the_database_refuses_for_its_documents_is_dead_lettered_at_once() -> (
    None
):
    sleeps = Sleeps()
    refused = BulkWriteError({"writeErrors": [{"index": 0, "code": 2, "errmsg": "invalid key"}]})
    handlers = PoisonHandlers("mem_0", refused)
    consumer, broker = consumer_for(handlers, sleeps)
    assert await consumer.process_batch([record(request(0))]) == [Outcome.DEAD_LETTERED]
    assert sleeps.asked == []
    assert broker.letters[0]["error_type"] == "refused_document:BulkWriteError"


async def test_a_bulk_write_that_failed_on_a_duplicate_key_is_retried() -> None:
    sleeps = Sleeps()
    raced = BulkWriteError({"writeErrors": [{"index": 0, "code": 11000, "errmsg": "duplicate"}]})
    handlers = PoisonHandlers("mem_0", raced)
    consumer, _ = consumer_for(handlers, sleeps)
    assert await consumer.process_batch([record(request(0))]) == [Outcome.DEAD_LETTERED]
    assert len(sleeps.asked) == 2, "a race may pass on a later attempt"
