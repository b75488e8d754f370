"""The relay deletes sent parcels together: one delete per quarter second (or fifty parcels), not
one per pass, and never leaves a sent parcel for a rescan to queue again."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import pytest

from engram_platform.outbox.relay import FORGET_AFTER_SECONDS, FORGET_AT_PARCELS, OutboxRelay

pytestmark = pytest.mark.unit


@dataclass
class Parcels:
    """The relay's view of the outbox: a queue of parcel ids, the stored ones, the deletes."""

    stored: list[str] = field(default_factory=list)
    queue: deque[str] = field(default_factory=deque)
    deletes: list[list[str]] = field(default_factory=list)
    fail_delete: bool = False

    def stage(self, parcel_id: str) -> None:
        self.stored.append(parcel_id)
        self.queue.append(parcel_id)

    async def rescan(self) -> None:
        self.queue.extend(p for p in self.stored if p not in self.queue)

    async def next_parcels(self, limit: int = 20) -> list[dict[str, Any]]:
        taken = [self.queue.popleft() for _ in range(min(limit, len(self.queue)))]
        return [{"_id": p, "entries": [{"_id": f"e-{p}"}]} for p in taken]

    async def mark_sent(self, parcel_ids: list[str]) -> None:
        if self.fail_delete:
            raise ConnectionError("database away")
        self.deletes.append(list(parcel_ids))
        self.stored = [p for p in self.stored if p not in parcel_ids]


@dataclass
class Sender:
    sent: list[str] = field(default_factory=list)

    async def send(self, entries: list[dict[str, Any]]) -> None:
        self.sent += [e["_id"] for e in entries]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def relay() -> tuple[OutboxRelay, Parcels, Sender, Clock]:
    parcels, sender, clock = Parcels(), Sender(), Clock()
    made = OutboxRelay(parcels, sender, service="svc", clock=clock)  # type: ignore[arg-type]
    made._last_scan = clock.now
    return made, parcels, sender, clock


async def test_parcels_sent_in_quick_passes_leave_in_one_delete() -> None:
    relay_, parcels, sender, clock = relay()
    for n in range(3):
        parcels.stage(f"p{n}")
        assert await relay_.publish_pending() == 1
        assert await relay_.publish_pending() == 0
        clock.now += 0.05
    assert sender.sent == ["e-p0", "e-p1", "e-p2"] and parcels.deletes == []
    clock.now += FORGET_AFTER_SECONDS
    assert await relay_.publish_pending() == 0
    assert parcels.deletes == [["p0", "p1", "p2"]] and parcels.stored == []


async def test_many_sent_parcels_are_deleted_at_once() -> None:
    relay_, parcels, _, _ = relay()
    for n in range(FORGET_AT_PARCELS):
        parcels.stage(f"p{n}")
    while await relay_.publish_pending():
        pass
    assert [len(d) for d in parcels.deletes] == [FORGET_AT_PARCELS]


async def test_a_rescan_never_queues_a_sent_parcel_again() -> None:
    relay_, parcels, sender, clock = relay()
    parcels.stage("p0")
    await relay_.publish_pending()
    clock.now += relay_.rescan_seconds
    assert await relay_.publish_pending() == 0
    assert sender.sent == ["e-p0"] and parcels.deletes == [["p0"]]


async def test_a_failed_delete_keeps_the_parcels_for_the_next_one_and_stop_deletes() -> None:
    relay_, parcels, _, clock = relay()
    parcels.stage("p0")
    await relay_.publish_pending()
    parcels.fail_delete = True
    clock.now += FORGET_AFTER_SECONDS
    with pytest.raises(ConnectionError):
        await relay_.forget_sent()
    parcels.fail_delete = False
    await relay_.stop()
    assert parcels.deletes == [["p0"]] and parcels.stored == []


async def test_a_parcel_staged_during_a_pass_is_sent_without_waiting_the_interval() -> None:
    """A consumer stages a parcel while the relay's last pass awaits its delete: the relay
    starts another pass at once (the wake-up is not cleared after the pass)."""
    parcels = Parcels()
    wakeup = asyncio.Event()
    delivered = asyncio.Event()

    class Ticking(Clock):
        def __call__(self) -> float:
            self.now += FORGET_AFTER_SECONDS / 2.5
            return self.now

    class Outbox:
        queue = parcels.queue

        def __init__(self) -> None:
            self.wakeup = wakeup

        async def recover(self, collections: list[Any]) -> int:
            return 0

        async def rescan(self) -> None:
            await parcels.rescan()

        async def next_parcels(self, limit: int = 20) -> list[dict[str, Any]]:
            return await parcels.next_parcels(limit)

        async def mark_sent(self, parcel_ids: list[str]) -> None:
            await parcels.mark_sent(parcel_ids)
            if "p0" in parcel_ids:
                parcels.stage("staged-meanwhile")
                wakeup.set()

    class Watched(Sender):
        async def send(self, entries: list[dict[str, Any]]) -> None:
            await super().send(entries)
            if "e-staged-meanwhile" in self.sent:
                delivered.set()

    clock, sender = Ticking(), Watched()
    relay_ = OutboxRelay(Outbox(), sender, service="svc", interval=30.0, clock=clock)  # type: ignore[arg-type]
    relay_._last_scan = clock.now
    relay_._holding, relay_._lease_checked = True, time.monotonic()
    parcels.stage("p0")
    task = asyncio.create_task(relay_.run())
    try:
        await asyncio.wait_for(delivered.wait(), timeout=5.0)
    finally:
        task.cancel()
    assert sender.sent == ["e-p0", "e-staged-meanwhile"]
