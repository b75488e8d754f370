"""A hand-written fake of the parked lane's store, with the Mongo adapter's semantics (the
integration tier runs the same contract against both)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from engram_platform.consuming.parking import ParkedInput, Place


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
