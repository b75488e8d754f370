"""Whose texts the model embeds next: an interactive request's before any bulk load's.

The model runs one call at a time, first come first served, so a single memory written while
a bulk load is embedding would wait for every bulk batch already handed to it. Calls take
turns here instead: one call at a time goes to the model, and when it ends the next turn
goes to the oldest interactive call waiting, then to the oldest bulk one. An interactive
request waits for at most the one bulk batch being embedded.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ModelTurns:
    """One model call at a time, interactive callers first."""

    def __init__(self) -> None:
        self._busy = False
        self._waiting: dict[bool, deque[asyncio.Future[None]]] = {False: deque(), True: deque()}
        self.overtaken = 0
        """How many times an interactive call went before a bulk call that was waiting."""

    @asynccontextmanager
    async def turn(self, *, bulk: bool) -> AsyncIterator[None]:
        """Hold the model for one call; `bulk` calls let waiting interactive ones go first."""
        if self._busy:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting[bulk].append(waiter)
            if not bulk and self._waiting[True]:
                self.overtaken += 1
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._pass_on()
                raise
        else:
            self._busy = True
        try:
            yield
        finally:
            self._pass_on()

    def _pass_on(self) -> None:
        """Give the model to the next caller waiting, interactive first, or free it."""
        for bulk in (False, True):
            queue = self._waiting[bulk]
            while queue:
                waiter = queue.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    return
        self._busy = False
