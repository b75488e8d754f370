"""A handler's attempts: backoff between them, the DLQ (with the reason) when they run out or
the failure is permanent, and redelivery when the database itself is away."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from engram_events import Envelope, PoisonMessage
from engram_platform.consuming.messages import Handler
from engram_platform.dlq import DeadLetters
from engram_platform.metrics import ConsumerMetrics
from engram_platform.retry import PermanentError, RetryPolicy, is_outage, is_refused_document

log = logging.getLogger(__name__)


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
    ) -> list[Envelope[Any]] | None:
        """The events the handler returned, or None once the input is dead-lettered.

        `failed` is a batch call's answer for this input, counted as its first attempt.
        Raises when the last attempt failed because the database is unreachable.
        """
        fields: dict[str, str | None] = {
            "event_id": str(envelope.event_id),
            "event_type": envelope.event_type,
            "tenant_id": envelope.tenant_id,
        }
        for attempt in range(1, self.policy.max_attempts + 1):
            try:
                if attempt == 1 and failed is not None:
                    raise failed
                return list(await handler(envelope) or ())
            except (PermanentError, PoisonMessage) as exc:
                await self._dead_letter(record, exc, attempt, fields, None)
                return None
            except Exception as exc:
                self.metrics.failure(envelope.event_type, type(exc).__name__)
                if is_refused_document(exc):
                    reason = f"refused_document:{type(exc).__name__}"
                    await self._dead_letter(record, exc, attempt, fields, reason)
                    return None
                log.warning(
                    "handler attempt failed",
                    extra={**fields, "attempt": attempt, "error_type": type(exc).__name__},
                )
                if attempt == self.policy.max_attempts:
                    if is_outage(exc):
                        raise
                    reason = f"retries_exhausted:{type(exc).__name__}"
                    await self._dead_letter(record, exc, attempt, fields, reason)
                    return None
                await self.sleep(self.policy.delay(attempt))
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
