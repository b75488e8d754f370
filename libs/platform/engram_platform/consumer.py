"""The consumer runtime: decode, dedup, handle with retries, stage outgoing events, then ack.

A handler takes one typed event and returns the events to publish. The runtime stages them
in the outbox and marks the input applied before the offset is committed, so a crash at any
point replays the handler (whose writes are idempotent upserts) and stages the same ids.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypeVar

from faststream import AckPolicy
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from opentelemetry import trace
from pydantic import BaseModel

from engram_events import Envelope, EventType, PoisonMessage, decode, topic_name
from engram_platform.dlq import DeadLetters
from engram_platform.idempotency import AppliedEvents
from engram_platform.outbox import Outbox
from engram_platform.retry import PermanentError, RetryPolicy

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)
Published = Sequence[Envelope[Any]] | None
Handler = Callable[[Envelope[Any]], Awaitable[Published]]


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
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.service = service
        self.broker = broker
        self.outbox = outbox
        self.prefix = topic_prefix
        self.retry = retry or RetryPolicy()
        self.applied = AppliedEvents(db, service)
        self.dead_letters = DeadLetters(broker, topic_prefix=topic_prefix)
        self.routes: dict[str, Handler] = {}
        self.topics: set[str] = set()
        self.stats = ConsumerStats()
        self._sleep = sleep

    def on(
        self, event_type: EventType[P], handler: Callable[[Envelope[P]], Awaitable[Published]]
    ) -> None:
        """Route one event type to its handler."""
        self.routes[event_type.name] = handler
        self.topics.add(topic_name(event_type.topic, self.prefix))

    @property
    def group_id(self) -> str:
        """One consumer group per service; the topic prefix isolates test runs."""
        return f"{self.prefix}engram-{self.service}"

    def subscribe(
        self, *, auto_offset_reset: Literal["earliest", "latest", "none"] = "earliest"
    ) -> None:
        """Register one FastStream subscriber over every routed topic; commit only after process."""
        if not self.topics:
            raise RuntimeError(f"{self.service}: no handlers registered")

        async def on_message(msg: KafkaMessage) -> None:
            await self.process(msg.raw_message)

        self.broker.subscriber(
            *sorted(self.topics),
            group_id=self.group_id,
            ack_policy=AckPolicy.NACK_ON_ERROR,
            auto_offset_reset=auto_offset_reset,
            max_poll_interval_ms=10 * 60 * 1000,
        )(on_message)

    async def process(self, record: Any) -> Outcome:
        """Everything one message gets; raises only when even the DLQ is unreachable (then nack)."""
        span = trace.get_current_span()
        started = time.perf_counter()
        try:
            envelope = decode(record.value)
        except PoisonMessage as exc:
            await self.dead_letters.send(
                consumer=self.service, record=record, error=exc, attempts=1
            )
            return self._done(Outcome.DEAD_LETTERED, span, started)
        span.set_attributes(
            {
                "engram.tenant_id": envelope.tenant_id,
                "engram.event_id": str(envelope.event_id),
                "engram.event_type": envelope.event_type,
                "engram.consumer": self.service,
            }
        )
        handler = self.routes.get(envelope.event_type)
        if handler is None:
            return self._done(Outcome.IGNORED, span, started)
        if await self.applied.seen(envelope.event_id):
            return self._done(Outcome.DUPLICATE, span, started)
        return await self._apply(handler, envelope, record, span, started)

    async def _apply(
        self, handler: Handler, envelope: Envelope[Any], record: Any, span: Any, started: float
    ) -> Outcome:
        """Run the handler with backoff; dead-letter permanent failures and exhausted retries."""
        fields: dict[str, str | None] = {
            "event_id": str(envelope.event_id),
            "event_type": envelope.event_type,
            "tenant_id": envelope.tenant_id,
        }
        for attempt in range(1, self.retry.max_attempts + 1):
            try:
                published = await handler(envelope) or ()
                await self.outbox.stage(published)
                await self.applied.mark(envelope.event_id, envelope.event_type)
                span.set_attribute("engram.published_count", len(published))
                return self._done(Outcome.APPLIED, span, started)
            except (PermanentError, PoisonMessage) as exc:
                await self.dead_letters.send(
                    consumer=self.service,
                    record=record,
                    error=exc,
                    attempts=attempt,
                    envelope_fields=fields,
                )
                return self._done(Outcome.DEAD_LETTERED, span, started)
            except Exception as exc:
                log.warning(
                    "handler attempt failed",
                    extra={**fields, "attempt": attempt, "error_type": type(exc).__name__},
                )
                if attempt == self.retry.max_attempts:
                    await self.dead_letters.send(
                        consumer=self.service,
                        record=record,
                        error=exc,
                        attempts=attempt,
                        envelope_fields=fields,
                        reason=f"retries_exhausted:{type(exc).__name__}",
                    )
                    return self._done(Outcome.DEAD_LETTERED, span, started)
                await self._sleep(self.retry.delay(attempt))
        raise AssertionError("unreachable")

    def _done(self, outcome: Outcome, span: Any, started: float) -> Outcome:
        """Count and annotate the outcome."""
        self.stats.add(outcome)
        span.set_attribute("engram.outcome", outcome.value)
        span.set_attribute("engram.handler_ms", round((time.perf_counter() - started) * 1000, 3))
        return outcome
