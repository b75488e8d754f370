"""The parked lane: a transient failure waits in the lane, not in the batch, so another tenant's
input behind it in the partition goes on; a key's later inputs wait behind it, in order; the
retrier runs them when due, to the DLQ when the attempts run out; an outage still redelivers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pymongo.errors import ServerSelectionTimeoutError

from engram_events import Envelope, derive_event_id, encode, new_event
from engram_events.catalog import MEMORY_WITHDRAWN, MEMORY_WRITE_REQUESTED
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.memories import MemoryWithdrawn, MemoryWriteRequested
from engram_platform.consuming import BatchResult, Consumer, Outcome
from engram_platform.consuming.parked_lane import ParkedLane
from engram_platform.outbox import Outbox
from engram_platform.retry import RetryPolicy
from tests.support.parked import InMemoryParkedInputs, check_parked_store
from tests.unit.platform.test_consumer_batch import Broker, Database

pytestmark = pytest.mark.unit


@dataclass
class Record:
    value: bytes
    offset: int
    key: bytes
    topic: str = "engram.memories.v1"
    partition: int = 0
    headers: tuple[Any, ...] = ()


class Clock:
    """The lane's time, moved by the test."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def later(self, seconds: float = 60.0) -> None:
        self.now += timedelta(seconds=seconds)


class Handlers:
    """A memory write handler whose chosen inputs fail: `fails[memory_id]` more times, or for
    good; every call is noted in order."""

    def __init__(self, fails: dict[str, int], error: Exception | None = None) -> None:
        self.fails = fails
        self.error = error or RuntimeError("busy")
        self.calls: list[str] = []
        self.marked: list[tuple[str, int]] = []

    async def single(self, event: Envelope[Any]) -> list[Envelope[Any]]:
        memory_id = event.payload.memory_id
        self.calls.append(memory_id)
        if self.fails.get(memory_id, 0) > 0:
            self.fails[memory_id] -= 1
            raise self.error
        return []

    async def batch(self, events: list[Envelope[Any]]) -> list[BatchResult]:
        self.calls.append("batch:" + ",".join(e.payload.memory_id for e in events))
        raise RuntimeError("the whole call failed")

    async def dead_lettered(self, event: Envelope[Any], letter: DeadLetter) -> list[Any]:
        self.marked.append((event.payload.memory_id, letter.attempts))
        announced = MemoryWithdrawn(
            memory_id=event.payload.memory_id, agent_id=event.payload.agent_id, reason="deleted"
        )
        return [
            new_event(
                MEMORY_WITHDRAWN,
                announced,
                tenant_id=event.tenant_id,
                event_id=derive_event_id(event.event_id, "dead-lettered"),
            )
        ]


@dataclass
class Setup:
    consumer: Consumer
    parked_lane: ParkedLane
    handlers: Handlers
    broker: Broker
    db: Database
    parked: InMemoryParkedInputs
    clock: Clock
    slept: list[float]


def setup(
    handlers: Handlers, *, batch: bool = False, parked: InMemoryParkedInputs | None = None
) -> Setup:
    broker, db, clock = Broker(), Database(), Clock()
    store = parked or InMemoryParkedInputs()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    consumer = Consumer(
        service="memory",
        broker=broker,  # type: ignore[arg-type]  # a fake of the calls the consumer makes
        db=db,
        outbox=Outbox(db),
        retry=RetryPolicy(max_attempts=3),
        sleep=sleep,
        parked=store,
        clock=clock,
    )
    consumer.on(
        MEMORY_WRITE_REQUESTED,
        handlers.single,
        batch=handlers.batch if batch else None,
        on_dead_letter=handlers.dead_lettered,
    )
    assert consumer.parked_lane is not None
    return Setup(consumer, consumer.parked_lane, handlers, broker, db, store, clock, slept)


def write(memory_id: str, tenant: str, agent: str) -> Envelope[Any]:
    payload = MemoryWriteRequested(memory_id=memory_id, agent_id=agent, content="hi")
    return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id=tenant)


def record(event: Envelope[Any], offset: int) -> Record:
    """The record as the gateway publishes it: keyed by the agent."""
    key = MEMORY_WRITE_REQUESTED.key(event.payload).encode()
    return Record(encode(event), offset=offset, key=key)


def applied(s: Setup) -> set[str]:
    return {key.split(":", 1)[1] for key in s.db["applied_events"].docs}


def ids(*events: Envelope[Any]) -> set[str]:
    return {str(e.event_id) for e in events}


async def test_a_transient_failure_is_parked_and_another_tenants_input_behind_it_is_applied() -> (
    None
):
    s = setup(Handlers({"mem_a1": 1}))
    a1, b1 = write("mem_a1", "ten_a", "agt_a"), write("mem_b1", "ten_b", "agt_b")
    outcomes = await s.consumer.process_batch([record(a1, 0), record(b1, 1)])
    assert outcomes == [Outcome.PARKED, Outcome.APPLIED]
    assert applied(s) == ids(b1), "B is applied while A waits in the lane"
    assert s.slept == [], "nothing backs off in the batch"
    (row,) = s.parked.rows.values()
    assert (row.event_id, row.tenant_id, row.status) == (str(a1.event_id), "ten_a", "parked")
    assert (row.attempts, row.reason, row.record.offset) == (1, "RuntimeError", 0)
    assert row.due > s.clock.now and row.record.value == encode(a1)

    assert await s.parked_lane.retrier.run_due() > 0, "not due yet: nothing runs"
    assert s.handlers.calls == ["mem_a1", "mem_b1"]
    s.clock.later()
    await s.parked_lane.retrier.run_due()
    assert s.handlers.calls == ["mem_a1", "mem_b1", "mem_a1"]
    assert applied(s) == ids(a1, b1) and s.parked.rows == {}
    assert not s.parked_lane.lot.holds(row.key), "the key is released"


async def test_a_later_input_of_the_key_waits_behind_the_parked_one_and_runs_after_it() -> None:
    s = setup(Handlers({"mem_a1": 1}))
    a1, a2, a3 = (write(f"mem_a{n}", "ten_a", "agt_a") for n in (1, 2, 3))
    b1 = write("mem_b1", "ten_b", "agt_b")
    first = await s.consumer.process_batch([record(a1, 0), record(a2, 1)])
    second = await s.consumer.process_batch([record(a3, 2), record(b1, 3)])
    assert first == [Outcome.PARKED, Outcome.PARKED]
    assert second == [Outcome.PARKED, Outcome.APPLIED]
    assert s.handlers.calls == ["mem_a1", "mem_b1"], "no input of the key ran ahead of mem_a1"
    statuses = {row.event_id: row.status for row in s.parked.rows.values()}
    assert statuses == {
        str(a1.event_id): "parked",
        str(a2.event_id): "waiting",
        str(a3.event_id): "waiting",
    }
    assert applied(s) == ids(b1)

    s.clock.later()
    await s.parked_lane.retrier.run_due()
    assert s.handlers.calls == ["mem_a1", "mem_b1", "mem_a1", "mem_a2", "mem_a3"]
    assert applied(s) == ids(a1, a2, a3, b1) and s.parked.rows == {}


async def test_a_batch_call_that_fails_parks_the_failed_input_and_its_key_behind_it() -> None:
    s = setup(Handlers({"mem_a1": 1}), batch=True)
    a1, a2 = write("mem_a1", "ten_a", "agt_a"), write("mem_a2", "ten_a", "agt_a")
    b1 = write("mem_b1", "ten_b", "agt_b")
    outcomes = await s.consumer.process_batch([record(a1, 0), record(a2, 1), record(b1, 2)])
    assert outcomes == [Outcome.PARKED, Outcome.PARKED, Outcome.APPLIED]
    assert s.handlers.calls == ["batch:mem_a1,mem_a2,mem_b1", "mem_a1", "mem_b1"]
    s.clock.later()
    await s.parked_lane.retrier.run_due()
    assert s.handlers.calls[3:] == ["mem_a1", "mem_a2"]
    assert applied(s) == ids(a1, a2, b1)


async def test_attempts_run_out_to_the_dlq_with_the_hook_and_the_key_goes_on() -> None:
    s = setup(Handlers({"mem_a1": 99}))
    a1, a2 = write("mem_a1", "ten_a", "agt_a"), write("mem_a2", "ten_a", "agt_a")
    assert await s.consumer.process_batch([record(a1, 0), record(a2, 1)]) == [Outcome.PARKED] * 2
    s.clock.later()
    await s.parked_lane.retrier.run_due()
    assert s.parked.rows[str(a1.event_id)].attempts == 2 and s.broker.letters == []
    assert s.handlers.calls == ["mem_a1", "mem_a1"], "mem_a2 still waits"
    s.clock.later()
    await s.parked_lane.retrier.run_due()
    (letter,) = s.broker.letters
    assert letter["event_id"] == str(a1.event_id) and letter["attempts"] == 3
    assert letter["error_type"] == "retries_exhausted:RuntimeError"
    assert letter["tenant_id"] == "ten_a" and letter["offset"] == 0
    assert s.handlers.marked == [("mem_a1", 3)], "the owner is told"
    staged = [entry["_id"] for chunk in s.consumer.outbox.staged.values() for entry in chunk]
    assert staged == [str(derive_event_id(a1.event_id, "dead-lettered"))]
    assert s.handlers.calls == ["mem_a1", "mem_a1", "mem_a1", "mem_a2"]
    assert applied(s) == ids(a2) and s.parked.rows == {}


async def test_a_database_outage_in_the_batch_redelivers_it_and_parks_nothing() -> None:
    s = setup(Handlers({"mem_a1": 99}, ServerSelectionTimeoutError("no servers")))
    a1, b1 = write("mem_a1", "ten_a", "agt_a"), write("mem_b1", "ten_b", "agt_b")
    with pytest.raises(ServerSelectionTimeoutError):
        await s.consumer.process_batch([record(a1, 0), record(b1, 1)])
    assert s.parked.rows == {} and applied(s) == set() and s.broker.letters == []
    assert len(s.slept) == 2, "an outage is waited out in place, as for every input alike"


async def test_an_outage_when_a_parked_input_runs_again_keeps_it_without_counting_it() -> None:
    handlers = Handlers({"mem_a1": 1})
    s = setup(handlers)
    a1 = write("mem_a1", "ten_a", "agt_a")
    await s.consumer.process_batch([record(a1, 0)])
    handlers.fails["mem_a1"] = 99
    handlers.error = ServerSelectionTimeoutError("no servers")
    s.clock.later()
    await s.parked_lane.retrier.run_due()
    row = s.parked.rows[str(a1.event_id)]
    assert row.attempts == 1 and row.leased_until is None and row.due > s.clock.now
    assert s.broker.letters == [] and applied(s) == set()


async def test_a_replayed_batch_parks_the_same_rows_and_an_applied_input_is_a_duplicate() -> None:
    s = setup(Handlers({"mem_a1": 1}))
    a1, a2 = write("mem_a1", "ten_a", "agt_a"), write("mem_a2", "ten_a", "agt_a")
    batch = [record(a1, 0), record(a2, 1)]
    await s.consumer.process_batch(batch)
    parked = dict(s.parked.rows)
    assert await s.consumer.process_batch(batch) == [Outcome.PARKED] * 2
    assert s.parked.rows == parked, "the same rows, the first attempt's count kept"
    s.clock.later()
    await s.parked_lane.retrier.run_due()
    assert await s.consumer.process_batch(batch) == [Outcome.DUPLICATE] * 2
    assert s.handlers.calls == ["mem_a1", "mem_a1", "mem_a2"]


async def test_a_restarted_consumer_holds_the_parked_keys_and_runs_the_rows() -> None:
    first = setup(Handlers({"mem_a1": 1}))
    a1, a2 = write("mem_a1", "ten_a", "agt_a"), write("mem_a2", "ten_a", "agt_a")
    await first.consumer.process_batch([record(a1, 0)])
    again = setup(Handlers({}), parked=first.parked)
    await again.parked_lane.lot.load()
    assert await again.consumer.process_batch([record(a2, 1)]) == [Outcome.PARKED]
    assert again.handlers.calls == []
    again.clock.later()
    await again.parked_lane.retrier.run_due()
    assert again.handlers.calls == ["mem_a1", "mem_a2"] and again.parked.rows == {}


async def test_a_row_another_run_has_leased_is_left_to_it() -> None:
    s = setup(Handlers({"mem_a1": 1}))
    a1 = write("mem_a1", "ten_a", "agt_a")
    await s.consumer.process_batch([record(a1, 0)])
    s.clock.later()
    lease = s.clock.now + timedelta(seconds=30)
    assert await s.parked.claim(str(a1.event_id), s.clock.now, lease) is not None
    await s.parked_lane.retrier.run_due()
    assert s.handlers.calls == ["mem_a1"], "the other replica's row is not run twice"
    s.clock.later()
    await s.parked_lane.retrier.run_due()
    assert s.handlers.calls == ["mem_a1", "mem_a1"], "an expired lease is taken over"


async def test_the_fake_store_keeps_the_lane_contract() -> None:
    await check_parked_store(InMemoryParkedInputs())
