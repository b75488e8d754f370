"""The relay: publishes staged parcels in order over the service's sender, under a lease."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from engram_platform.outbox.embedded import Outbox
from engram_platform.sending import KafkaSender

log = logging.getLogger(__name__)
LEASES = "outbox_leases"
FORGET_AFTER_SECONDS = 0.25
FORGET_AT_PARCELS = 50
"""Sent parcels are deleted together, once the oldest has waited this long or this many wait:
one delete per pass cost a database call per batch at a steady trickle of writes. A crash in
between resends them, as a crash between a send and its delete always could; consumers skip the
ids they applied."""


class OutboxRelay:
    """Publishes staged events in order; one active relay per service database (a lease)."""

    def __init__(
        self,
        outbox: Outbox,
        sender: KafkaSender,
        *,
        service: str,
        interval: float = 0.05,
        lease_seconds: float = 10.0,
        recover_collections: Sequence[Any] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.outbox = outbox
        self.sender = sender
        self.service = service
        self.interval = interval
        self.lease = timedelta(seconds=lease_seconds)
        self.owner = f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}"
        self.recover_collections = list(recover_collections)
        self._task: asyncio.Task[None] | None = None
        self._lease_checked = float("-inf")
        self._holding = False
        self.rescan_seconds = 1.0
        self._last_scan = float("-inf")
        self.clock = clock
        self._sent: list[str] = []
        self._sent_since = 0.0

    async def _hold_lease(self) -> bool:
        """Take or renew the lease at most every half lease; another live relay keeps it."""
        checked = time.monotonic()
        if checked - self._lease_checked < self.lease.total_seconds() / 2:
            return self._holding
        self._holding = await self._claim_lease()
        self._lease_checked = checked
        return self._holding

    async def _claim_lease(self) -> bool:
        """One conditional upsert: ours if we own it or it has expired."""
        now = datetime.now(UTC)
        leases = self.outbox.db[LEASES]
        try:
            doc = await leases.find_one_and_update(
                {"_id": self.service, "$or": [{"owner": self.owner}, {"expires_at": {"$lt": now}}]},
                {"$set": {"owner": self.owner, "expires_at": now + self.lease}},
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
        except DuplicateKeyError:
            return False
        return bool(doc and doc.get("owner") == self.owner)

    async def publish_pending(self) -> int:
        """One pass: publish queued parcels (pipelined, in order); sent ones are deleted together
        later (see `FORGET_AFTER_SECONDS`), and always before a rescan could queue them again."""
        if not self.outbox.queue:
            now = self.clock()
            if now - self._last_scan < self.rescan_seconds:
                await self.forget_sent()
                return 0
            self._last_scan = now
            await self.forget_sent(now=True)
            await self.outbox.rescan()
        sent = 0
        done: list[str] = []
        for parcel in await self.outbox.next_parcels():
            await self.sender.send(parcel["entries"])
            done.append(parcel["_id"])
            sent += len(parcel["entries"])
        if done and not self._sent:
            self._sent_since = self.clock()
        self._sent += done
        await self.forget_sent()
        return sent

    async def forget_sent(self, *, now: bool = False) -> None:
        """Delete the sent parcels in one call when due (or `now`); kept for the next try if the
        delete fails."""
        if not self._sent:
            return
        waited = self.clock() - self._sent_since
        if not now and len(self._sent) < FORGET_AT_PARCELS and waited < FORGET_AFTER_SECONDS:
            return
        sent, self._sent = self._sent, []
        try:
            await self.outbox.mark_sent(sent)
        except BaseException:
            self._sent = sent + self._sent
            raise

    async def run(self) -> None:
        """Loop until cancelled; wakes early when something is staged in this process. The
        wake-up is cleared before a pass, not after it: a parcel staged while the pass awaits
        the database or the broker then starts the next pass at once instead of waiting out
        `interval` (50 ms), as one staged during a pass's delete of sent parcels did."""
        moved = await self.outbox.recover(self.recover_collections)
        if moved:
            log.info("outbox recovered embedded events", extra={"count": moved})
        while True:
            self.outbox.wakeup.clear()
            try:
                if await self._hold_lease():
                    while await self.publish_pending():
                        pass
                else:
                    await self.forget_sent()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("outbox relay pass failed", extra={"error_type": type(exc).__name__})
                await asyncio.sleep(1.0)
            try:
                await asyncio.wait_for(self.outbox.wakeup.wait(), timeout=self.interval)
            except TimeoutError:
                pass

    def start(self) -> None:
        """Run the relay in the background of the current event loop."""
        self._task = asyncio.get_running_loop().create_task(
            self.run(), name=f"relay-{self.service}"
        )

    async def stop(self) -> None:
        """Cancel the loop and delete what was sent; whatever is unsent stays staged for the
        next start (and what a failed delete left is sent again then)."""
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
            self._task = None
        try:
            await self.forget_sent(now=True)
        except Exception as exc:
            log.warning("outbox relay left sent parcels", extra={"error_type": type(exc).__name__})
