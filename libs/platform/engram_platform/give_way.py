"""Yield points inside a bulk batch's long synchronous stretches.

A consumer's lanes share one event loop, and the bulk lane's turns (see
`consuming.turns`) come between parts only: decoding a fetch of a thousand events, packing
their outgoing events or preparing a part's vectors holds the loop for tens of milliseconds
each, and an interactive write that arrives meanwhile waits for all of it. Code that loops over
many inputs calls `give_way()` once per input: on the bulk lane it waits while an interactive
batch is in flight and otherwise lets the loop run once every few milliseconds; anywhere else
it returns at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class Turns(Protocol):
    """What a yield point asks of the lanes' turns."""

    async def give_way(self) -> None: ...


_BULK_LANE: ContextVar[Turns | None] = ContextVar("engram_bulk_lane", default=None)


@contextmanager
def bulk_lane(turns: Turns) -> Iterator[None]:
    """Mark the running task (and tasks it starts) as handling the bulk lane."""
    token = _BULK_LANE.set(turns)
    try:
        yield
    finally:
        _BULK_LANE.reset(token)


async def give_way() -> None:
    """On the bulk lane, let interactive work go first; elsewhere, nothing."""
    turns = _BULK_LANE.get()
    if turns is not None:
        await turns.give_way()
