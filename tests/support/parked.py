"""A hand-written fake of the parked lane's store, with the Mongo adapter's semantics (the
integration tier runs the same contract against both)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from engram_events import Envelope, encode, new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.payloads.memories import MemoryWriteRequested
from engram_platform.consuming.parking import ParkedInput, ParkedInputs, ParkingLot, Place


class InMemoryParkedInputs:
    """`ParkedInputs` over a dict keyed by event id."""

    def __init__(self) -> None:
        self.rows: dict[str, ParkedInput] = {}

    async def park_many(self, rows: Sequence[ParkedInput]) -> None:
        for row in rows:
            self.rows.setdefault(row.event_id, row)

    async def places(self) -> list[Place]:
        return [
            Place(row.event_id, row.key, row.record.offset, row.due, row.leased_until)
            for row in self.rows.values()
        ]

    async def claim(self, event_id: str, now: datetime, until: datetime) -> ParkedInput | None:
        row = self.rows.get(event_id)
        if row is None or (row.leased_until is not None and row.leased_until > now):
            return None
        self.rows[event_id] = replace(row, leased_until=until)
        return self.rows[event_id]

    async def reschedule(
        self, event_id: str, *, attempts: int, reason: str | None, due: datetime
    ) -> None:
        row = self.rows[event_id]
        self.rows[event_id] = replace(
            row, status="parked", attempts=attempts, reason=reason, due=due, leased_until=None
        )

    async def release(self, event_id: str) -> None:
        self.rows[event_id] = replace(self.rows[event_id], leased_until=None)

    async def delete(self, event_id: str) -> None:
        self.rows.pop(event_id, None)

    async def holds(self, key: str) -> bool:
        return any(row.key == key for row in self.rows.values())


async def check_parked_store(store: ParkedInputs) -> None:
    """What the lane relies on of any store: a replayed park changes nothing, a key's rows are
    held until the last goes, a leased row is not claimed again until its lease runs out, and a
    rescheduled row is free again with its new count."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    lot = ParkingLot(store, clock=lambda: now)
    first, second = _input(0, "agt_a"), _input(1, "agt_a")
    parked = lot.row(first[0], first[1], status="parked", attempts=1, reason="E", delay=5)
    waiting = lot.row(second[0], second[1], status="waiting")
    await store.park_many([parked, waiting])
    await store.park_many([replace(parked, attempts=9), waiting])
    places = {p.event_id: p for p in await store.places()}
    assert set(places) == {parked.event_id, waiting.event_id}
    assert places[parked.event_id].offset == 0 and places[parked.event_id].key == parked.key
    assert places[parked.event_id].due == now + timedelta(seconds=5)
    lease = now + timedelta(seconds=30)
    claimed = await store.claim(parked.event_id, now, lease)
    assert claimed is not None and claimed.attempts == 1, "the first park is kept"
    assert claimed.record == parked.record and claimed.tenant_id == parked.tenant_id
    assert await store.claim(parked.event_id, now, lease) is None, "leased: another run has it"
    expired = lease + timedelta(seconds=1)
    assert await store.claim(parked.event_id, expired, expired + timedelta(seconds=30))
    await store.reschedule(parked.event_id, attempts=2, reason="E", due=expired)
    again = await store.claim(parked.event_id, expired, expired)
    assert again is not None and (again.attempts, again.status) == (2, "parked")
    await store.release(parked.event_id)
    await store.delete(parked.event_id)
    assert await store.holds(parked.key), "the waiting row still holds the key"
    await store.delete(waiting.event_id)
    assert not await store.holds(parked.key) and await store.places() == []
    assert await store.claim(parked.event_id, now, lease) is None, "a deleted row is gone"


def _input(offset: int, agent: str) -> tuple[Any, Envelope[Any]]:
    payload = MemoryWriteRequested(memory_id=f"mem_{offset}", agent_id=agent, content="hi")
    event = new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id="ten_a")
    record = SimpleNamespace(
        topic="engram.memories.v1",
        partition=0,
        offset=offset,
        key=agent.encode(),
        value=encode(event),
        headers=(("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"),),
    )
    return record, event
