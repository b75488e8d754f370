"""Writes arriving while one trip is on its way go together in the next (a group commit): under
load every POST paid a database round trip of its own, through a driver thread; now a trip
carries what queued behind the last one, and each caller still awaits its own result."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class _Trip(Generic[T, R]):
    """Items waiting to be written together, and the task writing them."""

    items: list[T] = field(default_factory=list)
    task: asyncio.Task[list[R]] | None = None


class GroupCommit(Generic[T, R]):
    """At most one trip on its way; items submitted meanwhile go in the next, one trip for all.

    `write` takes the items in submission order and answers one result each; a failed trip
    raises its error in each of its callers, and the next trip goes on regardless."""

    def __init__(self, write: Callable[[Sequence[T]], Awaitable[list[R]]]) -> None:
        self._write = write
        self._open: _Trip[T, R] | None = None
        self._writing: asyncio.Task[list[R]] | None = None

    async def submit(self, item: T) -> R:
        """Write `item` with whatever else is waiting; its own result once its trip is back."""
        trip = self._open
        if trip is None:
            trip = self._open = _Trip()
            trip.task = asyncio.create_task(self._go(trip, self._writing))
            self._writing = trip.task
        index = len(trip.items)
        trip.items.append(item)
        assert trip.task is not None
        results = await asyncio.shield(trip.task)
        return results[index]

    async def _go(self, trip: _Trip[T, R], previous: asyncio.Task[list[R]] | None) -> list[R]:
        """After the trip on its way, close this one to newcomers and write it."""
        try:
            if previous is not None:
                await asyncio.wait([previous])
            self._close(trip)
            results = await self._write(trip.items)
            if len(results) != len(trip.items):
                raise RuntimeError(f"{len(results)} results for {len(trip.items)} items")
            return results
        finally:
            self._close(trip)
            if self._writing is asyncio.current_task():
                self._writing = None

    def _close(self, trip: _Trip[T, R]) -> None:
        """No item joins this trip any more."""
        if self._open is trip:
            self._open = None
