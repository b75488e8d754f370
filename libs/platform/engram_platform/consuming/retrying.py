"""A handler's attempts: the DLQ (with the reason) when they run out or the failure is permanent
(`retry.failure_kind` decides, at the first attempt that shows it), redelivery when the database
itself is away, and between transient failures either a backoff in place or, with a parked lane,
a `Backoff` answer so the input waits in the lane and the batch goes on."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from engram_events import Envelope
from engram_events.payloads.dlq import DeadLetter
from engram_platform.consuming.messages import Handler
from engram_platform.dlq import DeadLetters
from engram_platform.metrics import ConsumerMetrics
from engram_platform.retry import Failure, RetryPolicy, failure_kind, failure_reason

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Backoff:
    """A transient failure with attempts left: the input is run again once `delay` has passed."""

    attempts: int
    """Attempts made so far, this one included."""
    reason: str
    """Why the last attempt failed, without content (`retry.failure_reason`)."""
    delay: float


class Attempts:
    """Runs one input's handler until it answers, or dead-letters it."""

    def __init__(
        self,
        *,
        service: str,
        policy: RetryPolicy,
        dead_letters: DeadLetters,
        metrics: ConsumerMetrics,
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        self.service = service
        self.policy = policy
        self.dead_letters = dead_letters
        self.metrics = metrics
        self.sleep = sleep

    async def run(
        self,
        handler: Handler,
        envelope: Envelope[Any],
        record: Any,
        failed: BaseException | None = None,
        *,
        done: int = 0,
        park: bool = False,
    ) -> list[Envelope[Any]] | DeadLetter | Backoff:
        """The events the handler returned, the dead letter the input became, or (with `park`)
        the backoff a transient failure asks for.

        `failed` is a batch call's answer for this input, counted as its first attempt; `done`
        counts the attempts an input made before it was parked. An outage is waited out in
        place (the database is away for every input alike). Raises when the last attempt
        failed because the database is unreachable.
        """
        fields: dict[str, str | None] = {
            "event_id": str(envelope.event_id),
            "event_type": envelope.event_type,
            "tenant_id": envelope.tenant_id,
        }
        first = done + 1
        for attempt in range(first, max(first, self.policy.max_attempts) + 1):
            try:
                if attempt == first and failed is not None:
                    raise failed
                return list(await handler(envelope) or ())
            except Exception as exc:
                kind = failure_kind(exc, attempt=attempt)
                if kind is Failure.PERMANENT:
                    return await self._dead_letter(record, exc, attempt, fields, None)
                self.metrics.failure(envelope.event_type, type(exc).__name__)
                log.warning(
                    "handler attempt failed",
                    extra={**fields, "attempt": attempt, "error_type": type(exc).__name__},
                )
                if attempt >= self.policy.max_attempts:
                    if kind is Failure.OUTAGE:
                        raise
                    error_type = f"retries_exhausted:{type(exc).__name__}"
                    return await self._dead_letter(record, exc, attempt, fields, error_type)
                if park and kind is Failure.TRANSIENT:
                    return Backoff(attempt, failure_reason(exc), self.policy.delay(attempt))
                await self.sleep(self.policy.delay(attempt))
        raise AssertionError("unreachable")

    async def _dead_letter(
        self,
        record: Any,
        error: BaseException,
        attempts: int,
        fields: dict[str, str | None],
        error_type: str | None,
    ) -> DeadLetter:
        return await self.dead_letters.send(
            consumer=self.service,
            record=record,
            error=error,
            attempts=attempts,
            envelope_fields=fields,
            error_type=error_type,
        )
