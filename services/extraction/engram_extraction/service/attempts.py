"""Failed attempts at an input, counted across restarts: the last one leaves a visible failure."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from engram_events import Envelope
from engram_extraction.ports import Outbox, RecordWrites
from engram_platform.retry import Failure, PermanentError, failure_kind

Events = list[Envelope[Any]]
Exhausted = Callable[[Envelope[Any], str, int], Awaitable[Events]]
"""What to record when an input's attempts run out: (event, reason, attempts) -> events."""


class FailureRecord:
    """Lets the consumer retry an input; on its last attempt stages the failure, then gives up."""

    def __init__(self, store: RecordWrites, outbox: Outbox, max_attempts: int) -> None:
        self.store = store
        self.outbox = outbox
        self.max_attempts = max_attempts

    async def run(
        self, event: Envelope[Any], apply: Callable[[], Awaitable[Events]], on_exhausted: Exhausted
    ) -> Events:
        """Let the consumer retry; on the last attempt stage the failure, then dead-letter. A
        failure no retry can fix goes straight to the consumer, which dead-letters it at once
        and runs the route's dead-letter hook (the same visible failure)."""
        try:
            return await apply()
        except Exception as exc:
            if failure_kind(exc) is Failure.PERMANENT:
                raise
            attempts = await self.store.count_attempt(event.tenant_id, str(event.event_id))
            if attempts < self.max_attempts:
                raise
            reason = f"extraction failed after {attempts} attempts ({type(exc).__name__})"
            await self.outbox.stage(await on_exhausted(event, reason, attempts))
            raise PermanentError(reason) from exc
