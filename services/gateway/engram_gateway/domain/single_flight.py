"""Concurrent reads of one key share one trip: when a memo expired, every request in flight
missed it at once and each read the same row (eight reads where one would do)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class SingleFlight(Generic[V]):
    """Reads by key; a read asked for while the same key's is on its way shares its answer (or
    its error), so callers get what one read found, at most as old as their own would be."""

    def __init__(self) -> None:
        self._flying: dict[Hashable, asyncio.Future[V]] = {}

    async def read(self, key: Hashable, fetch: Callable[[], Awaitable[V]]) -> V:
        """`fetch()`'s answer, joined to the key's read on its way when there is one."""
        flying = self._flying.get(key)
        if flying is not None:
            return await asyncio.shield(flying)
        task = asyncio.ensure_future(fetch())
        self._flying[key] = task
        try:
            return await asyncio.shield(task)
        finally:
            if self._flying.get(key) is task:
                del self._flying[key]
