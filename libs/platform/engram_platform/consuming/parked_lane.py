"""A consumer's parked lane in one piece: which of a batch's inputs wait behind their key, the
rows a batch stages, and the retrier that runs them again (see `parking`, `retrier`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from engram_events import Envelope
from engram_platform.consuming.messages import Outcome, Pending, Work
from engram_platform.consuming.parking import ParkedInputs, ParkingLot, order_key
from engram_platform.consuming.retrier import Rerun, Retrier
from engram_platform.consuming.retrying import Backoff
from engram_platform.metrics import ConsumerMetrics
from engram_platform.retry import RetryPolicy

log = logging.getLogger(__name__)


class ParkedLane:
    """Parks what cannot run now, in key order, and retries it in the background."""

    def __init__(
        self,
        store: ParkedInputs,
        rerun: Rerun,
        *,
        policy: RetryPolicy,
        metrics: ConsumerMetrics,
        clock: Callable[[], datetime],
        poll_seconds: float,
    ) -> None:
        self.lot = ParkingLot(store, clock)
        self.retrier = Retrier(
            self.lot, rerun, policy=policy, metrics=metrics, poll_seconds=poll_seconds
        )
        self.metrics = metrics
        self._started = False
        self._starting = asyncio.Lock()

    async def start(self) -> None:
        """Load the parked keys and start the retrier, once, before the first batch."""
        if self._started:
            return
        async with self._starting:
            if not self._started:
                await self.lot.load()
                self.retrier.start()
                self._started = True

    async def stop(self) -> None:
        """Stop the retrier; the row in hand finishes first, for a while."""
        await self.retrier.stop()
        self._started = False

    def held(self, record: Any, envelope: Envelope[Any], pending: Pending) -> bool:
        """Whether an input of this key is parked, before this batch or in it."""
        key = order_key(record, str(envelope.event_id))
        return key in pending.parked_keys or self.lot.holds(key)

    def wait_behind(self, run: list[Work], pending: Pending) -> tuple[list[Work], list[Work]]:
        """The run's inputs free to run, and those parked behind their key (unhandled)."""
        free: list[Work] = []
        behind: list[Work] = []
        for work in run:
            _, record, envelope = work
            if self.held(record, envelope, pending):
                self.park(record, envelope, pending, None)
                behind.append(work)
            else:
                free.append(work)
        return free, behind

    def park(
        self, record: Any, envelope: Envelope[Any], pending: Pending, backoff: Backoff | None
    ) -> Outcome:
        """Stage the input's row with the batch: waiting behind its key, or due after its
        backoff."""
        if backoff is None:
            row = self.lot.row(record, envelope, status="waiting")
        else:
            row = self.lot.row(
                record,
                envelope,
                status="parked",
                attempts=backoff.attempts,
                reason=backoff.reason,
                delay=backoff.delay,
            )
        pending.parked.append(row)
        pending.parked_keys.add(row.key)
        self.metrics.parked(envelope.event_type, row.status)
        log.info(
            "input parked",
            extra={
                "event_id": row.event_id,
                "event_type": row.event_type,
                "tenant_id": row.tenant_id,
                "status": row.status,
                "attempts": row.attempts,
                "offset": row.record.offset,
            },
        )
        return Outcome.PARKED

    async def write(self, pending: Pending) -> None:
        """Write the batch's rows (before its offset commits) and hold their keys."""
        await self.lot.park(pending.parked)
