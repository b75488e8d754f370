"""A small time-bounded memo of positive registry answers, so a hot key costs no database trip."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Recent(Generic[V]):
    """Answers kept for `seconds` (0 keeps nothing), at most `size` of them, oldest evicted first."""

    def __init__(
        self, seconds: float, size: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = seconds
        self.size = size
        self.clock = clock
        self._kept: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        """The kept answer while it is younger than `seconds`, else None."""
        found = self._kept.get(key)
        if found is None:
            return None
        expires, value = found
        if self.clock() >= expires:
            del self._kept[key]
            return None
        return value

    def put(self, key: Hashable, value: V) -> None:
        """Keep an answer; beyond `size` the oldest goes."""
        if self.seconds <= 0:
            return
        self._kept[key] = (self.clock() + self.seconds, value)
        self._kept.move_to_end(key)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)

    def forget(self, key: Hashable) -> None:
        """Drop an answer this instance knows to be stale."""
        self._kept.pop(key, None)
