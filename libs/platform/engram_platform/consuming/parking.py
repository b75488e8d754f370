"""The parked lane: an input whose attempt failed transiently waits out its backoff as a row in
the service's database, not in the batch, so the partition (and every other tenant's input behind
it) goes on; a later input of the same Kafka key waits behind it, so each key keeps its order.

A key's rows run in offset order (a key's records share one partition); the first row of a key
is its head, and only a head runs, once due. The keys with rows are kept in process, loaded at
start and topped up from the store at every pass of the retrier; a key is dropped only when the
store holds none of its rows and nothing parked it meanwhile, so the set may hold a key too
long (its next input waits, due at once, and runs at the next pass) but never too briefly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from engram_events import Envelope

Status = Literal["parked", "waiting"]
"""`parked`: its own attempt failed; `waiting`: not yet tried, behind a parked input of its key."""


def utcnow() -> datetime:
    """The time rows are due and leased by."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class StoredRecord:
    """A parked input's Kafka record, as the handler, the spans and the DLQ read it."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes
    headers: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class ParkedInput:
    """One parked input: the record that runs it again, its ids, and when it is due."""

    event_id: str
    event_type: str
    tenant_id: str | None
    key: str
    """The order key: the topic and the Kafka key (`order_key`)."""
    record: StoredRecord
    status: Status
    attempts: int
    reason: str | None
    due: datetime
    parked_at: datetime
    leased_until: datetime | None = None


@dataclass(frozen=True)
class Place:
    """Where a row stands in its key's line, without its bytes."""

    event_id: str
    key: str
    offset: int
    due: datetime
    leased_until: datetime | None


class ParkedInputs(Protocol):
    """Where a consumer's parked inputs are kept."""

    async def park_many(self, rows: Sequence[ParkedInput]) -> None:
        """Insert rows whose event id is new; a row already parked is left as it is."""

    async def places(self) -> list[Place]:
        """Every row's place in line."""

    async def claim(self, event_id: str, now: datetime, until: datetime) -> ParkedInput | None:
        """The row, leased until `until`, unless it is gone or another run holds its lease."""

    async def reschedule(
        self, event_id: str, *, attempts: int, reason: str | None, due: datetime
    ) -> None:
        """Park the row again (status `parked`), due later, its lease released."""

    async def release(self, event_id: str) -> None:
        """Give up the row's lease (a run stopped at shutdown)."""

    async def delete(self, event_id: str) -> None:
        """The row has left the lane."""

    async def holds(self, key: str) -> bool:
        """Whether any row of this key is left."""


def order_key(record: Any, event_id: str) -> str:
    """The topic and the Kafka key (names of topics hold no '|'); an input without a key is a
    line of its own."""
    key = getattr(record, "key", None)
    if isinstance(key, bytes | bytearray):
        return f"{record.topic}|{bytes(key).decode('utf-8', 'replace')}"
    return f"{record.topic}#{event_id}"


def stored(record: Any) -> StoredRecord:
    """What of a Kafka record is kept to run its input again."""
    value = record.value if isinstance(record.value, bytes | bytearray) else b""
    key = record.key if isinstance(record.key, bytes | bytearray) else None
    return StoredRecord(
        topic=str(record.topic),
        partition=int(record.partition),
        offset=int(record.offset),
        key=None if key is None else bytes(key),
        value=bytes(value),
        headers=tuple(
            (str(name), bytes(v))
            for name, v in (getattr(record, "headers", None) or ())
            if isinstance(v, bytes | bytearray)
        ),
    )


def due_heads(places: Iterable[Place], now: datetime) -> list[Place]:
    """Each key's first row (lowest offset), when it is due and no run holds it; earliest due
    first."""
    first: dict[str, Place] = {}
    for place in places:
        ahead = first.get(place.key)
        if ahead is None or place.offset < ahead.offset:
            first[place.key] = place
    heads = [
        p
        for p in first.values()
        if p.due <= now and (p.leased_until is None or p.leased_until <= now)
    ]
    return sorted(heads, key=lambda p: (p.due, p.offset))


@dataclass
class ParkingLot:
    """The parked keys in process, and the store behind them."""

    store: ParkedInputs
    clock: Callable[[], datetime] = utcnow
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when rows are parked, so the retrier looks at once."""
    _keys: set[str] = field(default_factory=set)
    _versions: dict[str, int] = field(default_factory=dict)

    def holds(self, key: str) -> bool:
        """Whether an input of this key must wait behind a parked one."""
        return key in self._keys

    def hold(self, keys: Iterable[str]) -> None:
        """These keys have rows (each hold is counted, so a drop can tell it came after)."""
        for key in keys:
            self._keys.add(key)
            self._versions[key] = self._versions.get(key, 0) + 1

    async def load(self) -> None:
        """Hold every key the store has rows of."""
        self.hold({place.key for place in await self.store.places()})

    def row(
        self,
        record: Any,
        envelope: Envelope[Any],
        *,
        status: Status,
        attempts: int = 0,
        reason: str | None = None,
        delay: float = 0.0,
    ) -> ParkedInput:
        """The row that parks this input, due after `delay` seconds."""
        now = self.clock()
        event_id = str(envelope.event_id)
        return ParkedInput(
            event_id=event_id,
            event_type=envelope.event_type,
            tenant_id=envelope.tenant_id,
            key=order_key(record, event_id),
            record=stored(record),
            status=status,
            attempts=attempts,
            reason=reason,
            due=now + timedelta(seconds=delay),
            parked_at=now,
        )

    async def park(self, rows: Sequence[ParkedInput]) -> None:
        """Write the rows, then hold their keys and wake the retrier."""
        if not rows:
            return
        await self.store.park_many(rows)
        self.hold(row.key for row in rows)
        self.wake.set()

    async def drop_if_empty(self, key: str) -> bool:
        """Stop holding a key whose rows are all gone, unless it was held again meanwhile."""
        version = self._versions.get(key)
        if await self.store.holds(key) or self._versions.get(key) != version:
            return False
        self._keys.discard(key)
        self._versions.pop(key, None)
        return True
