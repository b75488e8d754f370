"""The consumer's retrier: runs parked inputs again once they are due, each key's head first, a
row at a time under a lease (so two replicas never run the same row), until each is applied,
dead-lettered, or parked again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta

from engram_platform.consuming.messages import Outcome
from engram_platform.consuming.parking import ParkedInput, ParkingLot, Place, due_heads
from engram_platform.consuming.retrying import Backoff
from engram_platform.metrics import ConsumerMetrics
from engram_platform.retry import RetryPolicy, failure_reason

log = logging.getLogger(__name__)
Rerun = Callable[[ParkedInput], Awaitable[Outcome | Backoff]]
"""Runs one parked input's next attempts: its outcome, or the backoff it asks for; raises when
it could not be settled (the database or the broker away)."""
LEASE_SECONDS = 60.0
"""How long a claimed row is this run's: a replica that dies mid-run leaves it this long."""
MAX_PASSES = 100
"""Passes over the due heads in one go before the retrier waits again (each pass runs every
key's head; a key's next row becomes its head in the pass after)."""
STOP_SECONDS = 10.0
"""How long shutdown lets the row in hand finish before cancelling it."""


class Retrier:
    """Polls the lane for due heads and runs them; woken early when something is parked."""

    def __init__(
        self,
        lot: ParkingLot,
        rerun: Rerun,
        *,
        policy: RetryPolicy,
        metrics: ConsumerMetrics,
        poll_seconds: float = 1.0,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        self.lot = lot
        self.rerun = rerun
        self.policy = policy
        self.metrics = metrics
        self.poll_seconds = poll_seconds
        self.lease_seconds = lease_seconds
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    def start(self) -> None:
        """Run in the background until `stop`."""
        if self._task is None:
            self._stopping = False
            self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        """Let the row in hand finish (for a while), then end the loop."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        self.lot.wake.set()
        done, _ = await asyncio.wait([task], timeout=STOP_SECONDS)
        if not done:
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    async def _loop(self) -> None:
        while not self._stopping:
            self.lot.wake.clear()
            try:
                wait = await self.run_due()
            except Exception as exc:
                log.warning("parked lane unreadable", extra={"error_type": type(exc).__name__})
                wait = self.poll_seconds
            if self._stopping:
                return
            try:
                async with asyncio.timeout(wait):
                    await self.lot.wake.wait()
            except TimeoutError:
                pass

    async def run_due(self) -> float:
        """Run every due head, pass after pass, until none is due; returns the seconds until
        the next row may be (at most the poll interval)."""
        for _ in range(MAX_PASSES):
            places = await self.lot.store.places()
            self.lot.hold({place.key for place in places})
            heads = due_heads(places, self.lot.clock())
            if not heads:
                return self._until_next(places)
            for head in heads:
                if self._stopping:
                    return 0.0
                await self._run(head)
        return 0.0

    def _until_next(self, places: list[Place]) -> float:
        """Seconds until the earliest head is due or its lease runs out."""
        now = self.lot.clock()
        firsts: dict[str, Place] = {}
        for place in places:
            if place.key not in firsts or place.offset < firsts[place.key].offset:
                firsts[place.key] = place
        times = [max(p.due, p.leased_until or p.due) for p in firsts.values()]
        if not times:
            return self.poll_seconds
        return min(self.poll_seconds, max(0.0, (min(times) - now).total_seconds()))

    async def _run(self, head: Place) -> None:
        """Claim one head and settle it: gone, parked again, or kept for later."""
        store, now = self.lot.store, self.lot.clock()
        row = await store.claim(head.event_id, now, now + timedelta(seconds=self.lease_seconds))
        if row is None:
            return
        fields = {
            "event_id": row.event_id,
            "event_type": row.event_type,
            "tenant_id": row.tenant_id,
        }
        try:
            result = await self.rerun(row)
        except asyncio.CancelledError:
            await asyncio.shield(store.release(row.event_id))
            raise
        except Exception as exc:
            await self._keep(row, exc, fields)
            return
        if isinstance(result, Backoff):
            due = self.lot.clock() + timedelta(seconds=result.delay)
            await store.reschedule(
                row.event_id, attempts=result.attempts, reason=result.reason, due=due
            )
            self.metrics.retried(row.event_type, "parked")
            log.info("parked input parked again", extra={**fields, "attempts": result.attempts})
            return
        await store.delete(row.event_id)
        self.metrics.retried(row.event_type, result.value)
        released = await self.lot.drop_if_empty(row.key)
        self.metrics.released(row.event_type)
        log.info(
            "parked input released",
            extra={**fields, "outcome": result.value, "key_released": released},
        )

    async def _keep(self, row: ParkedInput, exc: Exception, fields: dict[str, str | None]) -> None:
        """Not settled (the database or the broker away): the row stays, due again after a
        backoff, its attempts unchanged; if even that write fails, its lease runs out."""
        self.metrics.retried(row.event_type, "kept")
        log.warning(
            "parked input kept",
            extra={**fields, "attempts": row.attempts, "error_type": type(exc).__name__},
        )
        due = self.lot.clock() + timedelta(seconds=self.policy.delay(max(1, row.attempts)))
        try:
            await self.lot.store.reschedule(
                row.event_id, attempts=row.attempts, reason=failure_reason(exc), due=due
            )
        except Exception as again:
            log.warning(
                "parked input left leased",
                extra={**fields, "error_type": type(again).__name__},
            )
