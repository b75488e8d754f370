"""The consumer runtime: decode, dedup, handle with retries, stage outgoing events, then ack.

A handler takes one typed event and returns the events to publish. Messages arrive in
batches; for each one the runtime runs its handler (retrying with backoff, dead-lettering
what cannot succeed) under the trace context the message carried. An event type may also have
a batch handler: consecutive messages of that type go to it in one call, it answers per input
(events or an exception), and a failed input falls back to the single handler's retries.
Then, for the whole batch, it stages the outgoing events in the outbox and marks the inputs
applied, and only then is the offset committed. A crash at any point replays the batch:
handlers' writes are idempotent upserts and outgoing events have deterministic ids, so a
replay stages the same events.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypeVar, cast

from faststream import AckPolicy
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from pydantic import BaseModel

from engram_events import Envelope, EventType, PoisonMessage, decode, topic_name
from engram_platform.dlq import DeadLetters
from engram_platform.idempotency import AppliedEvents, UnrecordedEvents
from engram_platform.metrics import ConsumerMetrics
from engram_platform.outbox import Outbox, publish_entries
from engram_platform.overlap import KafkaPositions, OverlappedFetches
from engram_platform.retry import PermanentError, RetryPolicy, is_outage

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)
Published = Sequence[Envelope[Any]] | None
Handler = Callable[[Envelope[Any]], Awaitable[Published]]
BatchResult = Published | BaseException
"""One input's answer from a batch handler: the events to publish, or why it failed."""
BatchHandler = Callable[[list[Envelope[Any]]], Awaitable[Sequence[BatchResult]]]
ID_FIELDS = (
    "document_id",
    "record_id",
    "memory_id",
    "agent_id",
    "fact_id",
    "prune_job_id",
    "import_id",
)
"""Payload ids copied onto the handler span as `engram.<field>`, so ops can find a trace by id."""
_PROPAGATED = ("traceparent", "tracestate", "baggage")
"""The headers the default propagators read: a message's context is a function of these."""


class Outcome(StrEnum):
    """What happened to one message."""

    APPLIED = "applied"
    DUPLICATE = "duplicate"
    IGNORED = "ignored"
    DEAD_LETTERED = "dead_lettered"


@dataclass
class ConsumerStats:
    """Counts per outcome, for readiness, tests and metrics."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, outcome: Outcome) -> None:
        self.counts[outcome.value] = self.counts.get(outcome.value, 0) + 1


@dataclass
class PreparedBatch:
    """A decoded batch whose look-ahead has been told: what is left to handle, and the
    outcomes already known (ignored, dead-lettered, duplicate)."""

    outcomes: list[Outcome | None]
    work: list[tuple[int, Any, Envelope[Any]]] = field(default_factory=list)
    finished: list[tuple[str, str, float]] = field(default_factory=list)


@dataclass
class _Pending:
    """Work a batch accumulates before its one durable step."""

    outbox_docs: list[dict[str, Any]] = field(default_factory=list)
    applied: list[tuple[str, str]] = field(default_factory=list)


async def _undecoded(message: Any) -> None:
    """FastStream would parse every body as JSON before the handler, which reads the raw
    records and decodes each itself (with validation): parsing twice cost a memory consumer
    a sixth of its time on embedding vectors."""
    return None


def _declared_type(record: Any) -> str | None:
    """The `event_type` header the relay puts on every event: enough to pass over an event
    this service does not handle without parsing it (an embedding's vectors are most of its
    topic's bytes). A message without the header is decoded as before."""
    for name, value in getattr(record, "headers", None) or ():
        if name == "event_type" and isinstance(value, bytes | bytearray):
            return value.decode("utf-8", "replace")
    return None


def _headers(record: Any) -> dict[str, str]:
    """Kafka headers as text, for W3C context extraction."""
    return {
        k: v.decode("latin-1")
        for k, v in (getattr(record, "headers", None) or ())
        if isinstance(v, bytes | bytearray)
    }


class Consumer:
    """One service's consumer group: routes event types to handlers on their topics."""

    def __init__(
        self,
        *,
        service: str,
        broker: KafkaBroker,
        db: Any,
        outbox: Outbox,
        topic_prefix: str = "",
        retry: RetryPolicy | None = None,
        batch_size: int = 100,
        batch_timeout_ms: int = 50,
        tracer_provider: TracerProvider | None = None,
        metrics: ConsumerMetrics | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.service = service
        self.broker = broker
        self.outbox = outbox
        self.prefix = topic_prefix
        self.retry = retry or RetryPolicy()
        self.batch_size = max(1, batch_size)
        self.batch_timeout_ms = batch_timeout_ms
        self.applied: AppliedEvents | UnrecordedEvents = AppliedEvents(db, service)
        self.dead_letters = DeadLetters(broker, topic_prefix=topic_prefix)
        self.routes: dict[str, Handler] = {}
        self.batch_routes: dict[str, BatchHandler] = {}
        self.ahead_routes: dict[str, Callable[[list[Envelope[Any]]], None]] = {}
        self.topics: set[str] = set()
        self.stats = ConsumerStats()
        self.tracer = (tracer_provider or trace.get_tracer_provider()).get_tracer("engram.consumer")
        self.metrics = metrics or ConsumerMetrics(service)
        self._sleep = sleep
        self._contexts: dict[tuple[str | None, ...], Context] = {}
        self._deliver: Callable[[list[dict[str, Any]]], Awaitable[Any]] = outbox.stage_entries
        self._publish_every: int | None = None
        self.overlapped: OverlappedFetches | None = None

    def publish_directly(self, every: int | None = None, *, record_applied: bool = True) -> None:
        """For a service that keeps no state: a batch's events are published (acks=all) before
        its inputs are marked applied, instead of staged for the relay. A crash in between sends
        the same event ids again, and consumers skip ids they applied.

        With `every`, batch-routed runs are cut at that many inputs and each part's events are
        sent while the next part is handled, so answers leave in a stream, not once per fetch.
        Without `record_applied`, inputs are neither looked up nor marked: for handlers whose
        only effect is those events, a replay is recomputation, not a second effect."""
        self._deliver = functools.partial(publish_entries, self.broker)
        self._publish_every = every
        if not record_applied:
            self.applied = UnrecordedEvents()

    def overlap_fetches(self) -> None:
        """Read and prepare the next fetch while this one's last answers go out and its offsets
        are committed, so a model fed by the look-ahead never waits at a fetch boundary (see
        `overlap`). Only for `publish_directly(every=..., record_applied=False)`: inputs are
        not marked, so a fetch read again is recomputed, not applied twice."""
        if not self._publish_every or not isinstance(self.applied, UnrecordedEvents):
            raise RuntimeError(
                "overlap_fetches needs publish_directly(every=N, record_applied=False)"
            )
        self.overlapped = OverlappedFetches(self)

    def on(
        self,
        event_type: EventType[P],
        handler: Callable[[Envelope[P]], Awaitable[Published]],
        *,
        batch: Callable[[list[Envelope[P]]], Awaitable[Sequence[BatchResult]]] | None = None,
        ahead: Callable[[list[Envelope[P]]], None] | None = None,
    ) -> None:
        """Route one event type to its handler, and optionally runs of it to a batch handler;
        `ahead` is told first, in order, every input of that type a batch is about to handle."""
        self.routes[event_type.name] = handler
        if batch is not None:
            self.batch_routes[event_type.name] = batch
        if ahead is not None:
            self.ahead_routes[event_type.name] = ahead
        self.topics.add(topic_name(event_type.topic, self.prefix))

    @property
    def group_id(self) -> str:
        """One consumer group per service; the topic prefix isolates test runs."""
        return f"{self.prefix}engram-{self.service}"

    def subscribe(
        self, *, auto_offset_reset: Literal["earliest", "latest", "none"] = "earliest"
    ) -> None:
        """One batch subscriber over every routed topic; the offset moves only after a batch."""
        if not self.topics:
            raise RuntimeError(f"{self.service}: no handlers registered")

        overlapped = self.overlapped

        async def on_batch(msg: KafkaMessage) -> None:
            raw = msg.raw_message
            records = list(raw) if isinstance(raw, tuple) else [raw]
            if overlapped is None:
                await self.process_batch(records)
            else:
                await overlapped.on_fetch(records, cast(KafkaPositions, msg.consumer))

        self.broker.subscriber(
            *sorted(self.topics),
            group_id=self.group_id,
            batch=True,
            max_records=self.batch_size,
            batch_timeout_ms=self.batch_timeout_ms,
            ack_policy=AckPolicy.NACK_ON_ERROR if overlapped is None else AckPolicy.MANUAL,
            auto_offset_reset=auto_offset_reset,
            max_poll_interval_ms=10 * 60 * 1000,
            decoder=_undecoded,
        )(on_batch)

    async def process(self, record: Any) -> Outcome:
        """One message on its own (a batch of one)."""
        return (await self.process_batch([record]))[0]

    async def process_batch(self, records: Sequence[Any]) -> list[Outcome]:
        """Handle every message, then stage all outgoing events and mark all inputs applied.

        Raises only when the DLQ or the database is unreachable; the batch is then redelivered.
        """
        return await self.complete_batch(await self.prepare_batch(records))

    async def prepare_batch(self, records: Sequence[Any]) -> PreparedBatch:
        """Decode, dead-letter the undecodable, skip what was applied, and tell the look-ahead
        routes what is coming; nothing is handled yet."""
        decoded: list[Envelope[Any] | None] = []
        skipped: dict[int, str] = {}
        for index, record in enumerate(records):
            declared = _declared_type(record)
            if declared is not None and declared not in self.routes:
                skipped[index] = declared
                decoded.append(None)
                continue
            try:
                decoded.append(decode(record.value))
            except PoisonMessage as exc:
                await self.dead_letters.send(
                    consumer=self.service, record=record, error=exc, attempts=1
                )
                decoded.append(None)
        ids = [str(e.event_id) for e in decoded if e is not None and e.event_type in self.routes]
        seen = await self.applied.seen_many(ids)
        batch = PreparedBatch(outcomes=[None] * len(records))
        for index, (record, envelope) in enumerate(zip(records, decoded, strict=True)):
            event_type = skipped.get(index) or (envelope.event_type if envelope else None)
            if index in skipped:
                outcome = Outcome.IGNORED
            elif envelope is None:
                outcome = Outcome.DEAD_LETTERED
            elif envelope.event_type not in self.routes:
                outcome = Outcome.IGNORED
            elif str(envelope.event_id) in seen:
                outcome = Outcome.DUPLICATE
            else:
                batch.work.append((index, record, envelope))
                seen.add(str(envelope.event_id))
                continue
            self._count(event_type, outcome, 0.0, batch.finished)
            batch.outcomes[index] = outcome
        self._look_ahead(batch.work)
        return batch

    async def complete_batch(self, batch: PreparedBatch) -> list[Outcome]:
        """Handle a prepared batch's work, send or stage its events, and mark its inputs."""
        pending = _Pending()
        outcomes, finished = batch.outcomes, batch.finished
        sending: asyncio.Future[None] | None = None
        try:
            for run in self._runs(batch.work):
                started = time.perf_counter()
                if run[0][2].event_type in self.batch_routes:
                    handled = await self._handle_run(run, pending)
                else:
                    _, record, envelope = run[0]
                    handled = [await self._handle(envelope, record, pending)]
                share = (time.perf_counter() - started) / len(run)
                for (index, _, envelope), outcome in zip(run, handled, strict=True):
                    self._count(envelope.event_type, outcome, share, finished)
                    outcomes[index] = outcome
                if self._publish_every:
                    docs, pending.outbox_docs = pending.outbox_docs, []
                    sending = asyncio.ensure_future(self._deliver_after(sending, docs))
            self.metrics.outcomes(finished)
            if sending is not None:
                await sending
            await self._deliver(pending.outbox_docs)
        finally:
            if sending is not None and not sending.done():
                sending.cancel()
        await self.applied.mark_many(pending.applied)
        return [outcome for outcome in outcomes if outcome is not None]

    def _look_ahead(self, work: list[tuple[int, Any, Envelope[Any]]]) -> None:
        """Tell each look-ahead route what this batch will hand it; only a hint, so a failure
        is logged and the batch goes on."""
        for kind, ahead in self.ahead_routes.items():
            upcoming = [envelope for _, _, envelope in work if envelope.event_type == kind]
            if upcoming:
                try:
                    ahead(upcoming)
                except Exception:
                    log.exception("look-ahead failed", extra={"event_type": kind})

    async def _deliver_after(
        self, previous: asyncio.Future[None] | None, docs: list[dict[str, Any]]
    ) -> None:
        """Send one part's events once the parts before it are out (a failure stops the rest)."""
        if previous is not None:
            await previous
        await self._deliver(docs)

    def _count(
        self,
        event_type: str | None,
        outcome: Outcome,
        seconds: float,
        finished: list[tuple[str, str, float]],
    ) -> None:
        """Tally the outcome; the batch's metrics are recorded together once it is done."""
        self.stats.add(outcome)
        finished.append((event_type or "undecodable", outcome.value, seconds))

    def _runs(
        self, work: list[tuple[int, Any, Envelope[Any]]]
    ) -> list[list[tuple[int, Any, Envelope[Any]]]]:
        """Consecutive inputs of one batch-routed type together (at most `publish_every` when
        set); every other input alone."""
        runs: list[list[tuple[int, Any, Envelope[Any]]]] = []
        cap = self._publish_every or len(work)
        for item in work:
            kind = item[2].event_type
            if (
                runs
                and kind in self.batch_routes
                and runs[-1][-1][2].event_type == kind
                and len(runs[-1]) < cap
            ):
                runs[-1].append(item)
            else:
                runs.append([item])
        return runs

    async def _handle_run(
        self, run: list[tuple[int, Any, Envelope[Any]]], pending: _Pending
    ) -> list[Outcome]:
        """One batch call for the run; each input keeps its outcome and retries, and each
        message trace its span: inputs that share one parent span (a prune's thousands of
        tombstones, staged by one handler) share one span under it, counted."""
        event_type = run[0][2].event_type
        batch_handler = self.batch_routes[event_type]
        contexts = [self._parent_context(r) for _, r, _ in run]
        parents = [trace.get_current_span(c).get_span_context() for c in contexts]
        with self.tracer.start_as_current_span(
            f"{run[0][1].topic} process {event_type} batch",
            kind=SpanKind.CONSUMER,
            links=[Link(p) for p in _distinct(parents) if p.is_valid],
        ) as batch_span:
            batch_span.set_attributes(
                {
                    "messaging.system": "kafka",
                    "messaging.batch.message_count": len(run),
                    "engram.event_type": event_type,
                    "engram.consumer": self.service,
                }
            )
            spans = self._run_spans(run, contexts, parents)
            started = time.perf_counter()
            try:
                results: Sequence[BatchResult] = await batch_handler([e for _, _, e in run])
                if len(results) != len(run):
                    raise RuntimeError(f"batch handler answered {len(results)} of {len(run)}")
            except Exception as exc:
                results = [exc] * len(run)
            took = round((time.perf_counter() - started) * 1000, 3)
        outcomes: list[Outcome] = []
        distinct: dict[int, tuple[Any, list[Outcome]]] = {id(span): (span, []) for span in spans}
        try:
            for span, _ in distinct.values():
                span.set_attribute("engram.handler_ms", took)
                span.set_attribute("engram.batched", True)
            for (_, record, envelope), span, result in zip(run, spans, results, strict=True):
                with trace.use_span(span):
                    outcome = await self._settle(envelope, record, pending, span, result)
                outcomes.append(outcome)
                distinct[id(span)][1].append(outcome)
            for span, theirs in distinct.values():
                self._finish_span(span, theirs)
        finally:
            for span, _ in distinct.values():
                span.end()
        return outcomes

    def _parent_context(self, record: Any) -> Context:
        """The trace context a message carried, extracted once per distinct set of propagation
        headers: a run's messages mostly carry the same one."""
        headers = _headers(record)
        if "traceparent" not in headers:
            return propagate.extract(headers)
        key = tuple(headers.get(name) for name in _PROPAGATED)
        cached = self._contexts.get(key)
        if cached is None:
            cached = propagate.extract(headers)
            if len(self._contexts) >= 1024:
                self._contexts.clear()
            self._contexts[key] = cached
        return cached

    def _run_spans(
        self,
        run: list[tuple[int, Any, Envelope[Any]]],
        contexts: list[Context],
        parents: list[Any],
    ) -> list[Any]:
        """Per input, its span: its own, or one shared with the inputs of the same parent."""
        members: dict[Any, list[int]] = {}
        for i, parent in enumerate(parents):
            key = (parent.trace_id, parent.span_id) if parent.is_valid else i
            members.setdefault(key, []).append(i)
        spans: list[Any] = [None] * len(run)
        for group in members.values():
            _, record, envelope = run[group[0]]
            span = self._start_span(envelope, record, contexts[group[0]], [run[i] for i in group])
            for i in group:
                spans[i] = span
        return spans

    async def _settle(
        self,
        envelope: Envelope[Any],
        record: Any,
        pending: _Pending,
        span: Any,
        result: BatchResult,
    ) -> Outcome:
        """Stage a batch input's events, or give a failed one the single handler's retries."""
        if not isinstance(result, BaseException):
            return self._applied(envelope, list(result or ()), pending, span)
        return await self._apply(envelope, record, pending, span, failed=result)

    async def _handle(self, envelope: Envelope[Any], record: Any, pending: _Pending) -> Outcome:
        """Run one handler in a span continuing the message's trace; retries, then the DLQ."""
        span = self._start_span(envelope, record)
        with trace.use_span(span, end_on_exit=True):
            started = time.perf_counter()
            outcome = await self._apply(envelope, record, pending, span)
            span.set_attribute(
                "engram.handler_ms", round((time.perf_counter() - started) * 1000, 3)
            )
            self._finish_span(span, [outcome])
            return outcome

    def _start_span(
        self,
        envelope: Envelope[Any],
        record: Any,
        parent: Context | None = None,
        shared: list[tuple[int, Any, Envelope[Any]]] | None = None,
    ) -> Any:
        """A consumer span under the message's trace context (extracted here unless the batch
        already did), linked to the batch's span; `shared` are the inputs it stands for when
        there are several."""
        if parent is None:
            parent = propagate.extract(_headers(record))
        batch_span = trace.get_current_span().get_span_context()
        links = [Link(batch_span)] if batch_span.is_valid else []
        attributes: dict[str, Any] = {
            "messaging.system": "kafka",
            "messaging.destination.name": record.topic,
            "messaging.kafka.offset": record.offset,
            "messaging.destination.partition.id": str(record.partition),
            "messaging.consumer.group.name": self.group_id,
            "engram.tenant_id": envelope.tenant_id,
            "engram.event_id": str(envelope.event_id),
            "engram.event_type": envelope.event_type,
            "engram.consumer": self.service,
            **_payload_ids(envelope),
        }
        if shared is not None and len(shared) > 1:
            attributes = _shared_attributes(attributes, shared)
        return self.tracer.start_span(
            f"{record.topic} process {envelope.event_type}",
            context=parent,
            kind=SpanKind.CONSUMER,
            links=links,
            attributes=attributes,
        )

    @staticmethod
    def _finish_span(span: Any, outcomes: list[Outcome]) -> None:
        """The outcome, or for a shared span each outcome's count; an error if any input was
        dead-lettered."""
        kinds = set(outcomes)
        if len(kinds) == 1:
            span.set_attribute("engram.outcome", outcomes[0].value)
        else:
            span.set_attribute("engram.outcome", "mixed")
        if len(outcomes) > 1:
            span.set_attributes(
                {f"engram.outcome.{kind.value}": outcomes.count(kind) for kind in kinds}
            )
        if Outcome.DEAD_LETTERED in kinds:
            span.set_status(Status(StatusCode.ERROR))

    def _applied(
        self, envelope: Envelope[Any], published: list[Envelope[Any]], pending: _Pending, span: Any
    ) -> Outcome:
        """Stage what the input owes (under its span's context) and count it applied."""
        pending.outbox_docs.extend(self.outbox.entries(published))
        pending.applied.append((str(envelope.event_id), envelope.event_type))
        so_far = (getattr(span, "attributes", None) or {}).get("engram.published_count", 0)
        span.set_attribute("engram.published_count", int(so_far) + len(published))
        return Outcome.APPLIED

    async def _apply(
        self,
        envelope: Envelope[Any],
        record: Any,
        pending: _Pending,
        span: Any,
        failed: BaseException | None = None,
    ) -> Outcome:
        """The handler with backoff; dead-letter permanent failures and exhausted retries.

        `failed` is a batch call's answer for this input, counted as its first attempt.
        """
        handler = self.routes[envelope.event_type]
        fields: dict[str, str | None] = {
            "event_id": str(envelope.event_id),
            "event_type": envelope.event_type,
            "tenant_id": envelope.tenant_id,
        }
        for attempt in range(1, self.retry.max_attempts + 1):
            try:
                if attempt == 1 and failed is not None:
                    raise failed
                published = list(await handler(envelope) or ())
            except (PermanentError, PoisonMessage) as exc:
                await self._dead_letter(record, exc, attempt, fields, None)
                return Outcome.DEAD_LETTERED
            except Exception as exc:
                self.metrics.failure(envelope.event_type, type(exc).__name__)
                log.warning(
                    "handler attempt failed",
                    extra={**fields, "attempt": attempt, "error_type": type(exc).__name__},
                )
                if attempt == self.retry.max_attempts:
                    if is_outage(exc):
                        raise
                    reason = f"retries_exhausted:{type(exc).__name__}"
                    await self._dead_letter(record, exc, attempt, fields, reason)
                    return Outcome.DEAD_LETTERED
                await self._sleep(self.retry.delay(attempt))
                continue
            return self._applied(envelope, published, pending, span)
        raise AssertionError("unreachable")

    async def _dead_letter(
        self,
        record: Any,
        error: BaseException,
        attempts: int,
        fields: dict[str, str | None],
        reason: str | None,
    ) -> None:
        await self.dead_letters.send(
            consumer=self.service,
            record=record,
            error=error,
            attempts=attempts,
            envelope_fields=fields,
            reason=reason,
        )


_ID_FIELDS_OF: dict[type[Any], tuple[tuple[str, str], ...]] = {}


def _id_fields(payload_type: type[Any]) -> tuple[tuple[str, str], ...]:
    """(field, span attribute) for the ID_FIELDS a payload type declares: asking a pydantic
    model for a field it lacks raises inside, a quarter of the span cost in a prune."""
    found = _ID_FIELDS_OF.get(payload_type)
    if found is None:
        declared = getattr(payload_type, "model_fields", {})
        found = tuple((name, f"engram.{name}") for name in ID_FIELDS if name in declared)
        _ID_FIELDS_OF[payload_type] = found
    return found


def _payload_ids(envelope: Envelope[Any]) -> dict[str, str]:
    """The aggregate ids an event names (ids only, never content)."""
    payload = envelope.payload
    found = {key: getattr(payload, name) for name, key in _id_fields(type(payload))}
    return {key: value for key, value in found.items() if isinstance(value, str) and value}


def _shared_attributes(
    first: dict[str, Any], members: list[tuple[int, Any, Envelope[Any]]]
) -> dict[str, Any]:
    """A span standing for several inputs: their count, offsets (when on one partition) and
    the ids they all name; the first input's own ids (its event id, ids the others do not
    share) are dropped."""
    envelopes = [envelope for _, _, envelope in members]
    common = _payload_ids(envelopes[0])
    for envelope in envelopes[1:]:
        theirs = _payload_ids(envelope)
        common = {k: v for k, v in common.items() if theirs.get(k) == v}
    dropped = {"engram.event_id", *(k for k in _payload_ids(envelopes[0]) if k not in common)}
    if any(e.tenant_id != envelopes[0].tenant_id for e in envelopes):
        dropped.add("engram.tenant_id")
    shared: dict[str, Any] = {"messaging.batch.message_count": len(members)}
    if len({record.partition for _, record, _ in members}) == 1:
        shared["engram.last_offset"] = members[-1][1].offset
    else:
        dropped.update({"messaging.kafka.offset", "messaging.destination.partition.id"})
    return {**{k: v for k, v in first.items() if k not in dropped}, **shared}


def _distinct(parents: list[Any]) -> list[Any]:
    """One of each parent span context, in order."""
    seen: dict[tuple[int, int], Any] = {}
    for parent in parents:
        seen.setdefault((parent.trace_id, parent.span_id), parent)
    return list(seen.values())
