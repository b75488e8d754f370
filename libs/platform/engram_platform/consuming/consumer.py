"""The consumer: decode, dedup, handle with retries, deliver outgoing events, then ack.

A handler takes one typed event and returns the events to publish. Messages arrive in batches; for
each one the runtime runs its handler (dead-lettering what cannot succeed) under the trace context
the message carried. An input whose attempt fails transiently is parked (see `parking`): it waits
out its backoff in the database, and so does every later input of its key, while the batch goes on;
the consumer's retrier runs it again when due. An event type may also have a batch handler:
consecutive messages of that type go to it in one call, it answers per input (events or an
exception), and a failed input falls back to the single handler. Then, for the whole batch, it
delivers the outgoing events (see `delivery`), writes the parked rows and marks the inputs applied,
and only then is the offset committed (that settling runs while the next fetch is handled, see
`settling`). A crash at any point replays the batch: handlers' writes are idempotent upserts,
outgoing events have deterministic ids and parked rows are keyed by event id, so a replay delivers
the same events and parks the same rows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from datetime import datetime
from typing import Any, Literal, TypeVar, cast

from faststream import AckPolicy
from faststream.kafka.annotations import KafkaMessage
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic import BaseModel

from engram_events import Envelope, EventType, PoisonMessage, decode
from engram_events.catalog import ANSWERED, ANSWERS
from engram_events.payloads.dlq import DeadLetter
from engram_events.topics import BULK_TOPICS
from engram_platform.broker import Broker
from engram_platform.consuming.delivery import OUTBOXED, Delivery, plan
from engram_platform.consuming.messages import (
    BatchResult,
    Handled,
    Outcome,
    Pending,
    PreparedBatch,
    Published,
    Work,
)
from engram_platform.consuming.overlap import KafkaPositions, OverlappedFetches
from engram_platform.consuming.parked_lane import ParkedLane
from engram_platform.consuming.parked_store import MongoParkedInputs
from engram_platform.consuming.parking import ParkedInput, ParkedInputs, utcnow
from engram_platform.consuming.retrying import Attempts, Backoff
from engram_platform.consuming.routing import Routes, decode_records
from engram_platform.consuming.settling import SettledBehind
from engram_platform.consuming.spans import ConsumerSpans, count_published, finish_span
from engram_platform.consuming.turns import LaneTurns
from engram_platform.dlq import DeadLetters
from engram_platform.give_way import bulk_lane
from engram_platform.metrics import ConsumerMetrics
from engram_platform.outbox import Outbox
from engram_platform.retry import RetryPolicy, is_outage

P = TypeVar("P", bound=BaseModel)
log = logging.getLogger(__name__)

BULK_POLL_MS = 50
"""How long the bulk lane's idle fetch waits. FastStream's batch subscriber sleeps as long again
after an empty fetch, so a lane's poll bounds how long an arriving event waits: the interactive
lane's is `consumer_poll_ms` (a few ms: idle polling costs ~0.2 % of a core a lane), the bulk
lane's this."""


class _Shared:
    """A batch call that raised as a whole: no input's own answer."""


_SHARED = _Shared()


async def _undecoded(message: Any) -> None:
    """FastStream would parse every body as JSON before the handler, which reads the raw
    records and decodes each itself (with validation): parsing twice cost a memory consumer
    a sixth of its time on embedding vectors."""
    return None


class Consumer:
    """One service's consumer group: routes event types to handlers on their topics."""

    def __init__(
        self,
        *,
        service: str,
        broker: Broker,
        db: Any,
        outbox: Outbox,
        topic_prefix: str = "",
        delivery: Delivery = OUTBOXED,
        retry: RetryPolicy | None = None,
        batch_size: int = 100,
        batch_timeout_ms: int = BULK_POLL_MS,
        poll_ms: int = 5,
        heartbeat_ms: int = 500,
        bulk_part: int = 50,
        bulk_share: float = 1.0,
        tracer_provider: TracerProvider | None = None,
        metrics: ConsumerMetrics | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        parked: ParkedInputs | None = None,
        parked_poll_seconds: float = 1.0,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.service = service
        self.broker = broker
        self.outbox = outbox
        self.prefix = topic_prefix
        self.batch_size = max(1, batch_size)
        self.batch_timeout_ms = batch_timeout_ms
        self.poll_ms = poll_ms
        self.heartbeat_ms = heartbeat_ms
        self.routes = Routes(topic_prefix)
        self.turns = LaneTurns(bulk_part=bulk_part, bulk_share=bulk_share)
        self.metrics = metrics or ConsumerMetrics(service)
        self.dead_letters = DeadLetters(broker.sender, topic_prefix=topic_prefix)
        policy = retry or RetryPolicy()
        self.attempts = Attempts(
            service=service,
            policy=policy,
            dead_letters=self.dead_letters,
            metrics=self.metrics,
            sleep=sleep,
        )
        tracer = (tracer_provider or trace.get_tracer_provider()).get_tracer("engram.consumer")
        self.spans = ConsumerSpans(tracer, service=service, group_id=self.group_id)
        chosen = plan(delivery, outbox=outbox, broker=broker, db=db, service=service)
        self._deliver, self._every, self.applied = chosen.deliver, chosen.every, chosen.applied
        self.pipelined = chosen.overlapped
        self.fetches: list[OverlappedFetches | SettledBehind[Handled]] = []
        """Each lane's fetches in flight: overlapped when pipelined, else settled behind the
        next (see `subscribe`)."""
        self.parked_lane: ParkedLane | None = None
        if not chosen.overlapped:
            self.parked_lane = ParkedLane(
                parked or MongoParkedInputs(db),
                self.rerun,
                policy=policy,
                metrics=self.metrics,
                clock=clock,
                poll_seconds=parked_poll_seconds,
            )

    def on(
        self,
        event_type: EventType[P],
        handler: Callable[[Envelope[P]], Awaitable[Published]],
        *,
        batch: Callable[[list[Envelope[P]]], Awaitable[Sequence[BatchResult]]] | None = None,
        ahead: Callable[[list[Envelope[P]]], None] | None = None,
        on_dead_letter: Callable[[Envelope[P], DeadLetter], Awaitable[Published]] | None = None,
    ) -> None:
        """Route one event type to its handler (see `Routes.on`)."""
        self.routes.on(event_type, handler, batch=batch, ahead=ahead, on_dead_letter=on_dead_letter)

    @property
    def topics(self) -> set[str]:
        """Every routed topic."""
        return self.routes.topics

    @property
    def group_id(self) -> str:
        """One consumer group per service; the topic prefix isolates test runs."""
        return f"{self.prefix}engram-{self.service}"

    def lanes(self) -> list[set[str]]:
        """The routed topics, split into the interactive lane and the bulk lane, each read by a
        subscriber of its own so that neither waits for the other's batches (a pipelined
        consumer's lanes overlap their fetches each on their own)."""
        bulk = {t for t in self.topics if t.removeprefix(self.prefix) in BULK_TOPICS}
        if not bulk or bulk == self.topics:
            return [set(self.topics)]
        return [self.topics - bulk, bulk]

    async def start(self) -> None:
        """Load the parked keys and start the retrier, once, before the first batch is handled
        (a pipelined consumer has no parked lane: it backs off in place)."""
        if self.parked_lane is not None:
            await self.parked_lane.start()

    async def stop(self) -> None:
        """Stop the retrier; the row in hand finishes first, for a while."""
        if self.parked_lane is not None:
            await self.parked_lane.stop()

    def subscribe(
        self, *, auto_offset_reset: Literal["earliest", "latest", "none"] = "earliest"
    ) -> None:
        """A batch subscriber per lane, all in the service's group; the offset moves only after
        a batch. An idle lane polls every `poll_ms` (the bulk lane every `batch_timeout_ms`)."""
        if not self.topics:
            raise RuntimeError(f"{self.service}: no handlers registered")

        lanes = self.lanes()
        for number, topics in enumerate(lanes):
            interactive = len(lanes) > 1 and number == 0
            bulk = len(lanes) > 1 and number == 1
            self.broker.subscriber(
                *sorted(topics),
                group_id=self.group_id,
                batch=True,
                max_records=self.batch_size,
                batch_timeout_ms=self.batch_timeout_ms if bulk else self.poll_ms,
                ack_policy=AckPolicy.MANUAL,
                auto_offset_reset=auto_offset_reset,
                max_poll_interval_ms=10 * 60 * 1000,
                heartbeat_interval_ms=self.heartbeat_ms,
                decoder=_undecoded,
            )(self._lane_reader(interactive=interactive, bulk=bulk))

    def _lane_reader(
        self, *, interactive: bool, bulk: bool = False
    ) -> Callable[[KafkaMessage], Awaitable[None]]:
        """What one lane's subscriber runs per fetch: its own overlapped fetches when pipelined,
        else the fetch handled (marked in flight on the interactive lane, so the bulk lane
        waits) and settled behind the next; the bulk lane's fetches run with its yield points
        live (see `engram_platform.give_way`)."""
        fetches: OverlappedFetches | SettledBehind[Handled]
        if self.pipelined:
            fetches = OverlappedFetches(self)
        else:

            async def handle(records: Sequence[Any]) -> Handled:
                return await self.handle_fetch(records, interactive=interactive)

            fetches = SettledBehind(handle, self.settle)
        self.fetches.append(fetches)

        async def on_batch(msg: KafkaMessage) -> None:
            raw = msg.raw_message
            records = list(raw) if isinstance(raw, tuple) else [raw]
            await self.start()
            with bulk_lane(self.turns) if bulk else nullcontext():
                await fetches.on_fetch(records, cast(KafkaPositions, msg.consumer))

        return on_batch

    async def drain(self) -> None:
        """Let each lane's fetch in flight finish (on shutdown)."""
        for fetches in self.fetches:
            await fetches.drain()

    async def process_batch(
        self, records: Sequence[Any], *, interactive: bool = False
    ) -> list[Outcome]:
        """Handle a fetch and settle it at once (see `handle_fetch` and `settle`).

        Raises only when the DLQ or the database is unreachable; the batch is then redelivered.
        """
        handled = await self.handle_fetch(records, interactive=interactive)
        await self.settle(handled)
        return handled.outcomes

    async def handle_fetch(self, records: Sequence[Any], *, interactive: bool = False) -> Handled:
        """Handle every message and deliver all outgoing events; the inputs are marked applied
        when the fetch is settled. An `interactive` lane's batch with inputs to handle is
        marked in flight, so the bulk lane waits (one of only events this service ignores is
        not), and so are the requests it sent until their answers come back."""
        batch = await self.prepare_batch(records)
        if not (interactive and batch.work):
            return await self.handle_batch(batch)
        with self.turns.interactive():
            self.turns.answered(sum(w[2].event_type in ANSWERS for w in batch.work))
            handled = await self.handle_batch(batch)
        self.turns.expect_answers(handled.requests)
        return handled

    async def prepare_batch(self, records: Sequence[Any]) -> PreparedBatch:
        """Decode, dead-letter the undecodable, skip what was applied, and tell the look-ahead
        routes what is coming; nothing is handled yet."""
        decoded, skipped, salvaged = await decode_records(
            self.routes, records, self.dead_letters, self.service
        )
        routed = self.routes.single
        ids = [str(e.event_id) for e in decoded if e is not None and e.event_type in routed]
        seen = await self.applied.seen_many(ids)
        batch = PreparedBatch(outcomes=[None] * len(records), dead_lettered=salvaged)
        for index, (record, envelope) in enumerate(zip(records, decoded, strict=True)):
            event_type = skipped.get(index) or (envelope.event_type if envelope else None)
            if index in skipped:
                outcome = Outcome.IGNORED
            elif envelope is None:
                outcome = Outcome.DEAD_LETTERED
            elif envelope.event_type not in routed:
                outcome = Outcome.IGNORED
            elif str(envelope.event_id) in seen:
                outcome = Outcome.DUPLICATE
            else:
                batch.work.append((index, record, envelope))
                seen.add(str(envelope.event_id))
                continue
            self._count(event_type, outcome, 0.0, batch.finished)
            batch.outcomes[index] = outcome
        batch.work.sort(key=self._in_bulk_lane)
        batch.bulk = bool(batch.work) and all(self._in_bulk_lane(w) for w in batch.work)
        self.routes.look_ahead(batch.work)
        return batch

    def _in_bulk_lane(self, work: Work) -> bool:
        """Whether an input came by the bulk lane (handled after a fetch's other inputs; the
        lanes are different topics, so no partition's order changes)."""
        return str(work[1].topic).removeprefix(self.prefix) in BULK_TOPICS

    async def complete_batch(self, batch: PreparedBatch) -> list[Outcome]:
        """Handle a prepared batch's work, deliver its events, and mark its inputs."""
        handled = await self.handle_batch(batch)
        await self.settle(handled)
        return handled.outcomes

    async def settle(self, handled: Handled) -> None:
        """Mark a handled fetch's inputs applied: after its events are delivered, so a replay
        before this delivers them again instead of skipping them."""
        await self.applied.mark_many(handled.applied)

    async def handle_batch(self, batch: PreparedBatch) -> Handled:
        """Handle a prepared batch's work, deliver its events and write its parked inputs."""
        pending = Pending()
        outcomes, finished = batch.outcomes, batch.finished
        sending: asyncio.Future[None] | None = None
        for envelope, letter in batch.dead_lettered:
            await self._dead_lettered(envelope, letter, pending)
        cap = self._every or (self.turns.part_size() if batch.bulk else None)
        try:
            for whole in self.routes.runs(batch.work, cap):
                if batch.bulk:
                    await self.turns.bulk_turn()
                run = self._wait_behind(whole, pending, outcomes, finished)
                if not run:
                    continue
                started = time.perf_counter()
                if run[0][2].event_type in self.routes.batch:
                    handled = await self._handle_run(run, pending)
                else:
                    _, record, envelope = run[0]
                    handled = [await self._handle(envelope, record, pending)]
                share = (time.perf_counter() - started) / len(run)
                for (index, _, envelope), outcome in zip(run, handled, strict=True):
                    self._count(envelope.event_type, outcome, share, finished)
                    outcomes[index] = outcome
                if self._every:
                    docs, pending.outbox_docs = pending.outbox_docs, []
                    sending = asyncio.ensure_future(self._deliver_after(sending, docs))
            self.metrics.outcomes(finished)
            if sending is not None:
                await sending
            await self._deliver(pending.outbox_docs)
        finally:
            if sending is not None and not sending.done():
                sending.cancel()
        if self.parked_lane is not None:
            await self.parked_lane.write(pending)
        if batch.bulk:
            await self.turns.bulk_done()
        return Handled(
            [outcome for outcome in outcomes if outcome is not None],
            pending.applied,
            pending.requests,
        )

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
        """Note the outcome; the batch's metrics are recorded together once it is done."""
        finished.append((event_type or "undecodable", outcome.value, seconds))

    async def _handle_run(self, run: list[Work], pending: Pending) -> list[Outcome]:
        """One batch call for the run; each input keeps its outcome and retries, and each
        message trace its span: inputs that share one parent span (a prune's thousands of
        tombstones, staged by one handler) share one span under it, counted."""
        batch_handler = self.routes.batch[run[0][2].event_type]
        contexts = [self.spans.parent_context(r) for _, r, _ in run]
        with self.spans.batch_call(run, contexts) as (_, spans):
            started = time.perf_counter()
            try:
                results: Sequence[BatchResult | _Shared] = await batch_handler(
                    [e for _, _, e in run]
                )
                if len(results) != len(run):
                    raise RuntimeError(f"batch handler answered {len(results)} of {len(run)}")
            except Exception:
                results = [_SHARED] * len(run)
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
                finish_span(span, theirs)
        finally:
            for span, _ in distinct.values():
                span.end()
        return outcomes

    async def _settle(
        self,
        envelope: Envelope[Any],
        record: Any,
        pending: Pending,
        span: Any,
        result: BatchResult | _Shared,
    ) -> Outcome:
        """Take a batch input's events, or give a failed one the single handler's retries. An
        input whose own answer was an exception has had its first attempt; when the whole call
        raised, the failure may be any one input's (a poison write fails its tenant's insert),
        so each input is tried again alone, and only its own failure decides its fate."""
        if isinstance(result, _Shared):
            return await self._apply(envelope, record, pending, span)
        if not isinstance(result, BaseException):
            return self._applied(envelope, list(result or ()), pending, span)
        return await self._apply(envelope, record, pending, span, failed=result)

    async def _handle(self, envelope: Envelope[Any], record: Any, pending: Pending) -> Outcome:
        """Run one handler in a span continuing the message's trace; retries, then the DLQ."""
        span = self.spans.start(envelope, record)
        with trace.use_span(span, end_on_exit=True):
            started = time.perf_counter()
            outcome = await self._apply(envelope, record, pending, span)
            span.set_attribute(
                "engram.handler_ms", round((time.perf_counter() - started) * 1000, 3)
            )
            finish_span(span, [outcome])
            return outcome

    async def _apply(
        self,
        envelope: Envelope[Any],
        record: Any,
        pending: Pending,
        span: Any,
        failed: BaseException | None = None,
    ) -> Outcome:
        """The handler's attempts; the input is applied, parked (behind its key's parked input,
        or after a transient failure), or dead-lettered and its owner told."""
        lane = self.parked_lane
        if lane is not None and lane.held(record, envelope, pending):
            return lane.park(record, envelope, pending, None)
        handler = self.routes.single[envelope.event_type]
        published = await self.attempts.run(
            handler, envelope, record, failed, park=lane is not None
        )
        if isinstance(published, Backoff):
            assert lane is not None
            return lane.park(record, envelope, pending, published)
        if isinstance(published, DeadLetter):
            await self._dead_lettered(envelope, published, pending)
            return Outcome.DEAD_LETTERED
        return self._applied(envelope, published, pending, span)

    async def _dead_lettered(
        self, envelope: Envelope[Any], letter: DeadLetter, pending: Pending
    ) -> None:
        """Run the route's dead-letter hook and stage what it announces with the batch (the
        input stays unmarked, so a replayed letter is handled again). An outage redelivers the
        batch; any other failure of the hook is logged, and the letter stays in the DLQ."""
        hook = self.routes.dead_lettered.get(envelope.event_type)
        if hook is None:
            return
        try:
            announced = list(await hook(envelope, letter) or ())
        except Exception as exc:
            if is_outage(exc):
                raise
            log.warning(
                "dead-letter hook failed",
                extra={
                    "event_id": str(envelope.event_id),
                    "event_type": envelope.event_type,
                    "error_type": type(exc).__name__,
                },
            )
            return
        pending.outbox_docs.extend(self.outbox.entries(announced))

    def _applied(
        self, envelope: Envelope[Any], published: list[Envelope[Any]], pending: Pending, span: Any
    ) -> Outcome:
        """Take what the input owes (under its span's context) and count it applied."""
        pending.outbox_docs.extend(self.outbox.entries(published))
        pending.applied.append((str(envelope.event_id), envelope.event_type))
        pending.requests += sum(e.event_type in ANSWERED for e in published)
        count_published(span, len(published))
        return Outcome.APPLIED

    def _wait_behind(
        self,
        run: list[Work],
        pending: Pending,
        outcomes: list[Outcome | None],
        finished: list[tuple[str, str, float]],
    ) -> list[Work]:
        """The run without the inputs whose key has an input parked ahead: those are parked
        behind it, unhandled. (Inputs answered in one batch call with a parked one are already
        applied; the parked one alone waits.)"""
        if self.parked_lane is None:
            return run
        free, behind = self.parked_lane.wait_behind(run, pending)
        for index, _, envelope in behind:
            outcomes[index] = Outcome.PARKED
            self._count(envelope.event_type, Outcome.PARKED, 0.0, finished)
        return free

    async def rerun(self, row: ParkedInput) -> Outcome | Backoff:
        """A parked input's next attempts, settled as a batch settles them: its events delivered
        and it marked applied, or dead-lettered with its route's hook run; one applied meanwhile
        (a replayed batch) is a duplicate. Raises when it cannot be settled now."""
        record = row.record
        try:
            envelope = decode(record.value)
        except PoisonMessage as exc:
            fields = {"event_id": row.event_id, "event_type": row.event_type}
            await self.dead_letters.send(
                consumer=self.service,
                record=record,
                error=exc,
                attempts=row.attempts + 1,
                envelope_fields={**fields, "tenant_id": row.tenant_id},
            )
            return Outcome.DEAD_LETTERED
        handler = self.routes.single.get(envelope.event_type)
        if handler is None:
            return Outcome.IGNORED
        event_id = str(envelope.event_id)
        if event_id in await self.applied.seen_many([event_id]):
            return Outcome.DUPLICATE
        pending = Pending()
        started = time.perf_counter()
        span = self.spans.start(envelope, record)
        with trace.use_span(span, end_on_exit=True):
            result = await self.attempts.run(
                handler, envelope, record, done=row.attempts, park=True
            )
            if isinstance(result, Backoff):
                finish_span(span, [Outcome.PARKED])
                return result
            if isinstance(result, DeadLetter):
                await self._dead_lettered(envelope, result, pending)
                outcome = Outcome.DEAD_LETTERED
            else:
                outcome = self._applied(envelope, result, pending, span)
            finish_span(span, [outcome])
        await self._deliver(pending.outbox_docs)
        await self.applied.mark_many(pending.applied)
        self.metrics.outcome(envelope.event_type, outcome.value, time.perf_counter() - started)
        return outcome
