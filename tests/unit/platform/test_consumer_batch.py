"""The batch route: runs of one type in one call, each input with its own outcome and retries."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opentelemetry import baggage
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pymongo.errors import BulkWriteError, ServerSelectionTimeoutError

from engram_events import Envelope, derive_event_id, encode, new_event
from engram_events.catalog import MEMORY_WITHDRAWN, MEMORY_WRITE_REQUESTED
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.memories import MemoryWithdrawn, MemoryWriteRequested
from engram_platform.consuming import BatchResult, Consumer, Outcome
from engram_platform.outbox import Outbox
from engram_platform.retry import PermanentError, RetryPolicy
from tests.support.parked import InMemoryParkedInputs

pytestmark = pytest.mark.unit
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


class Collection:
    """The few collection calls the consumer makes, over a dict."""

    def __init__(self) -> None:
        self.docs: dict[str, Any] = {}

    def find(self, query: dict[str, Any], projection: Any = None) -> Any:
        wanted = query["_id"]["$in"]
        found = [{"_id": key} for key in wanted if key in self.docs]

        async def rows() -> Any:
            for row in found:
                yield row

        return rows()

    async def insert_many(self, docs: list[dict[str, Any]], ordered: bool = True) -> None:
        self.docs.update({d["_id"]: d for d in docs})


class Database(dict[str, Collection]):
    def __missing__(self, name: str) -> Collection:
        self[name] = Collection()
        return self[name]


@dataclass
class Broker:
    """Keeps what its sender would send to Kafka (here: only dead letters)."""

    letters: list[dict[str, Any]] = field(default_factory=list)

    @property
    def sender(self) -> Broker:
        return self

    async def send(self, entries: list[dict[str, Any]]) -> None:
        self.letters.extend(json.loads(entry["value"]) for entry in entries)


@dataclass
class Record:
    value: bytes
    topic: str = "engram.memories.v1"
    partition: int = 0
    offset: int = 0
    key: bytes = b"agt_1"
    headers: tuple[Any, ...] = ()


def request(n: int) -> Envelope[Any]:
    payload = MemoryWriteRequested(memory_id=f"mem_{n}", agent_id="agt_1", content="hi")
    return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id="ten_1")


def withdrawn(n: int) -> Envelope[Any]:
    payload = MemoryWithdrawn(memory_id=f"mem_{n}", agent_id="agt_1", reason="deleted")
    return new_event(MEMORY_WITHDRAWN, payload, tenant_id="ten_1")


def record(event: Envelope[Any], offset: int = 0, traceparent: str | None = None) -> Record:
    headers = (("traceparent", traceparent.encode()),) if traceparent else ()
    return Record(encode(event), offset=offset, headers=headers)


def owed(event: Envelope[Any]) -> list[Envelope[Any]]:
    """What a handler publishes for an input: one follow-up with a deterministic id."""
    payload = MemoryWriteRequested(
        memory_id=f"{event.payload.memory_id}_next", agent_id="agt_1", content="next"
    )
    return [
        new_event(
            MEMORY_WRITE_REQUESTED,
            payload,
            tenant_id=event.tenant_id,
            event_id=derive_event_id(event.event_id, "follow-up"),
        )
    ]


class FakeHandlers:
    """A batch handler that fails chosen inputs, and a single handler that may keep failing."""

    def __init__(self, fail: dict[str, BaseException], single_fails: bool = False) -> None:
        self.fail = fail
        self.single_fails = single_fails
        self.calls: list[tuple[str, list[str]]] = []

    async def batch(self, events: list[Envelope[Any]]) -> list[BatchResult]:
        self.calls.append(("batch", [e.payload.memory_id for e in events]))
        return [self.fail.get(e.payload.memory_id) or owed(e) for e in events]

    async def single(self, event: Envelope[Any]) -> list[Envelope[Any]]:
        self.calls.append(("single", [event.payload.memory_id]))
        if self.single_fails:
            raise RuntimeError("still broken")
        return owed(event)


async def no_sleep(seconds: float) -> None:
    return None


class Clock:
    """The parked lane's time, moved by the test."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def retry_parked(consumer: Consumer) -> None:
    """Let the parked inputs' backoff pass and the retrier run them."""
    assert consumer.parked_lane is not None
    clock = consumer.parked_lane.lot.clock
    assert isinstance(clock, Clock)
    clock.now += timedelta(minutes=1)
    await consumer.parked_lane.retrier.run_due()


def consumer_for(
    handlers: FakeHandlers, tracer_provider: TracerProvider | None = None
) -> tuple[Consumer, Broker, Database]:
    broker, db = Broker(), Database()
    consumer = Consumer(
        service="memory",
        broker=broker,  # type: ignore[arg-type]  # a fake of the calls the consumer makes
        db=db,
        outbox=Outbox(db),
        retry=RetryPolicy(max_attempts=3),
        sleep=no_sleep,
        tracer_provider=tracer_provider,
        parked=InMemoryParkedInputs(),
        clock=Clock(),
    )
    consumer.on(MEMORY_WRITE_REQUESTED, handlers.single, batch=handlers.batch)
    consumer.on(MEMORY_WITHDRAWN, handlers.single)
    return consumer, broker, db


def staged_ids(consumer: Consumer) -> list[str]:
    return [entry["_id"] for chunk in consumer.outbox.staged.values() for entry in chunk]


def applied_ids(db: Database) -> set[str]:
    return {key.split(":", 1)[1] for key in db["applied_events"].docs}


async def test_a_run_of_one_type_is_one_batch_call_and_every_input_is_applied() -> None:
    handlers = FakeHandlers({})
    consumer, broker, db = consumer_for(handlers)
    events = [request(n) for n in range(3)]
    outcomes = await consumer.process_batch([record(e, i) for i, e in enumerate(events)])
    assert outcomes == [Outcome.APPLIED] * 3
    assert handlers.calls == [("batch", ["mem_0", "mem_1", "mem_2"])]
    assert staged_ids(consumer) == [str(derive_event_id(e.event_id, "follow-up")) for e in events]
    assert applied_ids(db) == {str(e.event_id) for e in events}
    assert broker.letters == []


async def test_a_failed_input_alone_is_parked_then_applied_on_the_single_path() -> None:
    handlers = FakeHandlers({"mem_1": RuntimeError("conflict")})
    consumer, _, db = consumer_for(handlers)
    events = [request(n) for n in range(3)]
    outcomes = await consumer.process_batch([record(e, i) for i, e in enumerate(events)])
    assert outcomes == [Outcome.APPLIED, Outcome.PARKED, Outcome.APPLIED]
    assert applied_ids(db) == {str(events[0].event_id), str(events[2].event_id)}
    await retry_parked(consumer)
    assert handlers.calls == [("batch", ["mem_0", "mem_1", "mem_2"]), ("single", ["mem_1"])]
    assert sorted(staged_ids(consumer)) == sorted(
        str(derive_event_id(e.event_id, "follow-up")) for e in events
    )
    assert applied_ids(db) == {str(e.event_id) for e in events}


async def test_an_input_that_keeps_failing_is_dead_lettered_and_the_others_applied_once() -> None:
    handlers = FakeHandlers({"mem_1": RuntimeError("conflict")}, single_fails=True)
    consumer, broker, db = consumer_for(handlers)
    events = [request(n) for n in range(3)]
    outcomes = await consumer.process_batch([record(e, i) for i, e in enumerate(events)])
    assert outcomes == [Outcome.APPLIED, Outcome.PARKED, Outcome.APPLIED]
    await retry_parked(consumer)
    await retry_parked(consumer)
    assert handlers.calls == [
        ("batch", ["mem_0", "mem_1", "mem_2"]),
        ("single", ["mem_1"]),
        ("single", ["mem_1"]),
    ], "the batch answer is the first of three attempts"
    (letter,) = broker.letters
    assert letter["event_id"] == str(events[1].event_id) and letter["attempts"] == 3
    assert letter["error_type"] == "retries_exhausted:RuntimeError"
    assert applied_ids(db) == {str(events[0].event_id), str(events[2].event_id)}
    assert len(staged_ids(consumer)) == 2


async def test_a_permanent_failure_is_dead_lettered_at_once() -> None:
    handlers = FakeHandlers({"mem_0": PermanentError("unfixable")})
    consumer, broker, db = consumer_for(handlers)
    event = request(0)
    assert await consumer.process_batch([record(event)]) == [Outcome.DEAD_LETTERED]
    assert handlers.calls == [("batch", ["mem_0"])]
    assert broker.letters[0]["attempts"] == 1 and applied_ids(db) == set()


async def test_a_batch_call_that_raises_falls_back_to_each_input_alone() -> None:
    handlers = FakeHandlers({})

    async def broken(events: list[Envelope[Any]]) -> list[BatchResult]:
        raise RuntimeError("whole batch failed")

    consumer, _, db = consumer_for(handlers)
    consumer.routes.batch[MEMORY_WRITE_REQUESTED.name] = broken
    events = [request(n) for n in range(2)]
    outcomes = await consumer.process_batch([record(e, i) for i, e in enumerate(events)])
    assert outcomes == [Outcome.APPLIED] * 2
    assert handlers.calls == [("single", ["mem_0"]), ("single", ["mem_1"])]
    assert applied_ids(db) == {str(e.event_id) for e in events}


async def test_runs_keep_the_order_across_types_and_skip_duplicates() -> None:
    handlers = FakeHandlers({})
    consumer, _, _ = consumer_for(handlers)
    a, b, other, c = request(0), request(1), withdrawn(9), request(2)
    batch = [record(a, 0), record(b, 1), record(a, 2), record(other, 3), record(c, 4)]
    outcomes = await consumer.process_batch(batch)
    assert outcomes == [
        Outcome.APPLIED,
        Outcome.APPLIED,
        Outcome.DUPLICATE,
        Outcome.APPLIED,
        Outcome.APPLIED,
    ]
    assert handlers.calls == [
        ("batch", ["mem_0", "mem_1"]),
        ("single", ["mem_9"]),
        ("batch", ["mem_2"]),
    ]
    assert await consumer.process_batch([record(a, 5)]) == [Outcome.DUPLICATE]


async def test_an_event_type_without_a_route_is_passed_over_by_its_header_unparsed() -> None:
    handlers = FakeHandlers({})
    consumer, broker, _ = consumer_for(handlers)
    unrouted = Record(b"{not json", offset=0, headers=(("event_type", b"embedding.computed"),))
    routed = Record(
        encode(request(0)), offset=1, headers=(("event_type", b"memory.write_requested"),)
    )
    bare = Record(b"{not json", offset=2)
    outcomes = await consumer.process_batch([unrouted, routed, bare])
    assert outcomes == [Outcome.IGNORED, Outcome.APPLIED, Outcome.DEAD_LETTERED]
    assert handlers.calls == [("batch", ["mem_0"])]
    assert [letter["offset"] for letter in broker.letters] == [2]


async def test_an_answer_addressed_to_another_service_is_passed_over_unparsed() -> None:
    handlers = FakeHandlers({})
    consumer, _, _ = consumer_for(handlers)
    typed = ("event_type", b"memory.write_requested")
    theirs = Record(b"{not json", offset=0, headers=(typed, ("recipient", b"enrichment")))
    ours = Record(encode(request(1)), offset=1, headers=(typed, ("recipient", b"memory")))
    unaddressed = Record(encode(request(2)), offset=2, headers=(typed,))
    outcomes = await consumer.process_batch([theirs, ours, unaddressed])
    assert outcomes == [Outcome.IGNORED, Outcome.APPLIED, Outcome.APPLIED]
    assert handlers.calls == [("batch", ["mem_1", "mem_2"])]


async def test_each_batched_input_has_its_own_span_under_its_message_trace() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handlers = FakeHandlers({"mem_1": RuntimeError("conflict")})
    consumer, _, _ = consumer_for(handlers, provider)
    parents = [f"{n + 1:016x}" for n in range(2)]
    events = [request(n) for n in range(2)]
    await consumer.process_batch(
        [record(e, i, f"00-{TRACE_ID}-{parents[i]}-01") for i, e in enumerate(events)]
    )
    spans = exporter.get_finished_spans()
    inputs = [s for s in spans if not s.name.endswith("batch")]
    (batch,) = [s for s in spans if s.name.endswith("batch")]
    assert [format(s.parent.span_id, "016x") for s in inputs if s.parent] == parents
    assert {format(s.context.trace_id, "032x") for s in inputs} == {TRACE_ID}
    assert all(s.links[0].context.span_id == batch.context.span_id for s in inputs)
    attributes = [dict(s.attributes or {}) for s in inputs]
    assert [a["engram.outcome"] for a in attributes] == ["applied", "parked"]
    assert [
        {k: v for k, v in a.items() if k in {"engram.memory_id", "engram.agent_id"}}
        for a in attributes
    ] == [{"engram.memory_id": f"mem_{n}", "engram.agent_id": "agt_1"} for n in range(2)]
    assert not any("engram.record_id" in a or "hi" in a.values() for a in attributes)
    assert len(batch.links) == 2


async def test_inputs_of_one_parent_share_one_span_under_it_with_their_count() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handlers = FakeHandlers({"mem_2": PermanentError("unusable")})
    consumer, broker, _ = consumer_for(handlers, provider)
    shared, own = f"{7:016x}", f"{8:016x}"
    parents = [shared, shared, shared, own]
    outcomes = await consumer.process_batch(
        [record(request(n), n, f"00-{TRACE_ID}-{p}-01") for n, p in enumerate(parents)]
    )
    assert outcomes == [Outcome.APPLIED, Outcome.APPLIED, Outcome.DEAD_LETTERED, Outcome.APPLIED]
    assert len(broker.letters) == 1, "a shared span changes no input's outcome"
    inputs = [s for s in exporter.get_finished_spans() if not s.name.endswith("batch")]
    by_parent = {format(s.parent.span_id, "016x"): s for s in inputs if s.parent}
    assert len(inputs) == 2 and set(by_parent) == {shared, own}
    group, alone = by_parent[shared], by_parent[own]
    assert group.attributes is not None and alone.attributes is not None
    assert group.attributes["messaging.batch.message_count"] == 3
    assert (group.attributes["messaging.kafka.offset"], group.attributes["engram.last_offset"]) == (
        0,
        2,
    )
    assert group.attributes["engram.agent_id"] == "agt_1", "ids every input names are kept"
    assert "engram.memory_id" not in group.attributes, "one input's own id is not the group's"
    assert "engram.event_id" not in group.attributes
    assert group.attributes["engram.outcome"] == "mixed"
    assert group.attributes["engram.outcome.applied"] == 2
    assert group.attributes["engram.outcome.dead_lettered"] == 1
    assert group.attributes["engram.published_count"] == 2
    assert not group.status.is_ok
    assert alone.attributes["engram.memory_id"] == "mem_3"
    assert alone.attributes["engram.outcome"] == "applied" and alone.status.is_ok


async def test_inputs_that_carried_no_trace_share_one_span_and_stage_under_one_trace() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    consumer, _, _ = consumer_for(FakeHandlers({}), provider)
    untraced = [record(request(n), n) for n in range(3)]
    traced = record(request(3), 3, f"00-{TRACE_ID}-{8:016x}-01")
    await consumer.process_batch([*untraced, traced])
    inputs = [s for s in exporter.get_finished_spans() if not s.name.endswith("batch")]
    counts = [dict(s.attributes or {}).get("messaging.batch.message_count", 1) for s in inputs]
    assert sorted(c for c in counts if isinstance(c, int)) == [1, 3]
    staged = [e for chunk in consumer.outbox.staged.values() for e in chunk]
    origins = [e["headers"]["traceparent"] for e in staged]
    assert len(origins) == 4 and len(set(origins[:3])) == 1 and origins[3] != origins[0]


def test_a_cached_trace_context_is_reused_only_for_the_same_propagation_headers() -> None:
    consumer, _, _ = consumer_for(FakeHandlers({}))
    parent = f"00-{TRACE_ID}-{7:016x}-01"

    def carried(baggage_header: str | None) -> Record:
        headers = [("traceparent", parent.encode())]
        if baggage_header:
            headers.append(("baggage", baggage_header.encode()))
        return Record(b"", headers=tuple(headers))

    first = consumer.spans.parent_context(carried("team=a"))
    assert consumer.spans.parent_context(carried("team=a")) is first
    assert baggage.get_all(consumer.spans.parent_context(carried("team=b"))) == {"team": "b"}
    assert baggage.get_all(consumer.spans.parent_context(carried(None))) == {}


async def test_a_shared_span_over_several_partitions_names_no_single_offset() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    consumer, _, _ = consumer_for(FakeHandlers({}), provider)
    parent = f"00-{TRACE_ID}-{9:016x}-01"
    records = [record(request(n), 10 + n, parent) for n in range(2)]
    records[1].partition = 1
    await consumer.process_batch(records)
    [shared] = [s for s in exporter.get_finished_spans() if not s.name.endswith("batch")]
    assert shared.attributes is not None
    assert shared.attributes["messaging.batch.message_count"] == 2
    assert not {
        "messaging.kafka.offset",
        "messaging.destination.partition.id",
        "engram.last_offset",
    } & set(shared.attributes)


def refused_insert(memory_id: str) -> BulkWriteError:
    """What the local server answers an insert of a row with a dotted metadata key."""
    error = {"index": 0, "code": 2, "errmsg": 'invalid key: "a.b"', "op": {"_id": memory_id}}
    return BulkWriteError({"writeErrors": [error], "writeConcernErrors": [], "nInserted": 0})


class PoisonedHandlers(FakeHandlers):
    """The memory write path over a server that refuses one input's row: the whole batch call
    raises, and so does that input alone, on every attempt."""

    def __init__(self, poison: str) -> None:
        super().__init__({})
        self.poison = poison
        self.marked: list[tuple[str, str | None, int]] = []

    async def batch(self, events: list[Envelope[Any]]) -> list[BatchResult]:
        self.calls.append(("batch", [e.payload.memory_id for e in events]))
        raise refused_insert(self.poison)

    async def single(self, event: Envelope[Any]) -> list[Envelope[Any]]:
        self.calls.append(("single", [event.payload.memory_id]))
        if event.payload.memory_id == self.poison:
            raise refused_insert(self.poison)
        return owed(event)

    async def dead_lettered(self, event: Envelope[Any], letter: DeadLetter) -> list[Envelope[Any]]:
        self.marked.append((event.payload.memory_id, letter.reason, letter.attempts))
        announced = MemoryWithdrawn(
            memory_id=event.payload.memory_id, agent_id="agt_1", reason="deleted"
        )
        return [
            new_event(
                MEMORY_WITHDRAWN,
                announced,
                tenant_id=event.tenant_id,
                event_id=derive_event_id(event.event_id, "dead-lettered"),
            )
        ]


def poisoned_consumer(handlers: PoisonedHandlers) -> tuple[Consumer, Broker, Database]:
    consumer, broker, db = consumer_for(handlers)
    consumer.on(
        MEMORY_WRITE_REQUESTED,
        handlers.single,
        batch=handlers.batch,
        on_dead_letter=handlers.dead_lettered,
    )
    return consumer, broker, db


async def test_a_refused_write_is_dead_lettered_after_one_attempt_and_its_owner_told() -> None:
    handlers = PoisonedHandlers("mem_1")
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    consumer, broker, db = poisoned_consumer(handlers)
    consumer.attempts.sleep = sleep
    event = request(1)
    assert await consumer.process_batch([record(event)]) == [Outcome.DEAD_LETTERED]
    (letter,) = broker.letters
    assert letter["attempts"] == 1 and letter["error_type"] == "BulkWriteError"
    assert letter["reason"] == "BulkWriteError: write error codes 2"
    assert slept == [], "no backoff holds the partition for a failure no retry can fix"
    assert handlers.marked == [("mem_1", "BulkWriteError: write error codes 2", 1)]
    assert staged_ids(consumer) == [str(derive_event_id(event.event_id, "dead-lettered"))]
    assert applied_ids(db) == set(), "a replayed letter is handled again"


async def test_one_poisoned_input_fails_the_batch_call_but_not_its_neighbours() -> None:
    handlers = PoisonedHandlers("mem_1")
    consumer, broker, db = poisoned_consumer(handlers)
    events = [request(n) for n in range(3)]
    outcomes = await consumer.process_batch([record(e, i) for i, e in enumerate(events)])
    assert outcomes == [Outcome.APPLIED, Outcome.DEAD_LETTERED, Outcome.APPLIED]
    assert [letter["event_id"] for letter in broker.letters] == [str(events[1].event_id)]
    assert handlers.calls == [
        ("batch", ["mem_0", "mem_1", "mem_2"]),
        ("single", ["mem_0"]),
        ("single", ["mem_1"]),
        ("single", ["mem_2"]),
    ]
    assert applied_ids(db) == {str(events[0].event_id), str(events[2].event_id)}


async def test_a_failing_dead_letter_hook_leaves_the_letter_and_the_batch_goes_on() -> None:
    handlers = PoisonedHandlers("mem_0")

    async def broken(event: Envelope[Any], letter: DeadLetter) -> list[Envelope[Any]]:
        raise RuntimeError("cannot mark")

    consumer, broker, _ = consumer_for(handlers)
    consumer.on(MEMORY_WRITE_REQUESTED, handlers.single, on_dead_letter=broken)
    assert await consumer.process_batch([record(request(0))]) == [Outcome.DEAD_LETTERED]
    assert len(broker.letters) == 1 and staged_ids(consumer) == []


async def test_an_outage_in_the_dead_letter_hook_redelivers_the_batch() -> None:
    handlers = PoisonedHandlers("mem_0")

    async def away(event: Envelope[Any], letter: DeadLetter) -> list[Envelope[Any]]:
        raise ServerSelectionTimeoutError("no servers")

    consumer, _, db = consumer_for(handlers)
    consumer.on(MEMORY_WRITE_REQUESTED, handlers.single, on_dead_letter=away)
    with pytest.raises(ServerSelectionTimeoutError):
        await consumer.process_batch([record(request(0))])
    assert applied_ids(db) == set()


async def test_an_event_refused_at_decoding_still_names_its_tenant_and_reaches_the_hook() -> None:
    handlers = PoisonedHandlers("none")
    consumer, broker, _ = poisoned_consumer(handlers)
    event = request(4)
    wire = json.loads(encode(event))
    wire["payload"]["metadata"] = "not an object"
    undecodable = Record(json.dumps(wire).encode())
    assert await consumer.process_batch([undecodable]) == [Outcome.DEAD_LETTERED]
    (letter,) = broker.letters
    assert letter["tenant_id"] == "ten_1" and letter["event_id"] == str(event.event_id)
    assert letter["error_type"] == "malformed" and letter["attempts"] == 1
    assert handlers.marked == [("mem_4", "MalformedEvent", 1)]
    assert staged_ids(consumer) == [str(derive_event_id(event.event_id, "dead-lettered"))]


async def test_an_event_whose_ids_are_invalid_is_dead_lettered_without_the_hook() -> None:
    handlers = PoisonedHandlers("none")
    consumer, broker, _ = poisoned_consumer(handlers)
    wire = json.loads(encode(request(5)))
    wire["payload"]["memory_id"] = {"not": "an id"}
    assert await consumer.process_batch([Record(json.dumps(wire).encode())]) == [
        Outcome.DEAD_LETTERED
    ]
    assert len(broker.letters) == 1 and handlers.marked == []
