"""Turns between a consumer's lanes: interactive inputs go first.

Both lanes run on one event loop and share one database, so a bulk batch being handled slows
an interactive write that arrives meanwhile. While interactive batches are coming (one within
the last `recent` seconds), the bulk lane therefore handles its batch in parts, and before each
part waits while an interactive batch is being handled (at most `max_wait`, so a steady
interactive stream cannot starve a bulk load): an interactive write waits for at most the one
bulk part under way. With no interactive traffic a bulk batch goes whole, because each part
costs the handlers' fixed round trips again. The part size trades one for the other: on two
cores, parts of 25 kept a bulk load to about two thirds of its rate beside single writes, 50
to about 0.85, 100 to about the same but with single writes waiting longer.

Waiting for interactive batches in flight is not enough on a machine whose cores the bulk
load keeps busy: the interactive write's own work, in this service and in the broker, the
database and the next service, then queues behind the bulk load's for the CPU. While
interactive batches are coming, the bulk lane therefore also paces itself to `bulk_share` of
the time: after each part it rests for as long as its share leaves (a part that ran 30 ms at a
share of 0.75 rests 10 ms), so the processes an interactive write passes through find a core
free. With no interactive traffic, no rest.

An interactive write is not done when its batch is: memory asks the embedding service for its
vector and finishes it in a second pass. While such a request is out, the cores the bulk lane
would take are the ones the answer is computed on and travels through, so the bulk lane waits
for the answer as for an interactive batch in flight (at most `answer_wait`, for an answer lost
or late): beside a bulk load on two cores, a single write's second pass went from 29-33 ms p50,
73-106 ms p95 to 18-22 / 36-43. Beside a steady stream of single writes some answer is always
due, so a part waits for answers alone at most `answer_budget`: unbounded, 20 single writes a
second held a bulk load to a third of its rate.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

PACE_WINDOW = 0.25
"""The most of a bulk stretch between turns that the bulk share rests for."""
ANSWER_WAIT = 0.25
"""The longest the bulk lane waits for the answers to an interactive batch's requests."""
ANSWER_BUDGET = 0.05
"""The most a bulk part waits for answers alone (no interactive batch in flight): beside a
steady stream of single writes, answers are always due, and the bulk lane would get a part
only every `max_wait`."""


class LaneTurns:
    """Who may go next: the bulk lane yields to interactive batches in flight."""

    def __init__(
        self,
        *,
        bulk_part: int = 50,
        max_wait: float = 0.5,
        recent: float = 5.0,
        slice_seconds: float = 0.004,
        bulk_share: float = 1.0,
        answer_wait: float = ANSWER_WAIT,
        answer_budget: float = ANSWER_BUDGET,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.bulk_part = max(1, bulk_part)
        """Inputs per bulk part: the most an interactive write waits behind."""
        self.max_wait = max_wait
        self.recent = recent
        self.slice_seconds = slice_seconds
        """The longest a bulk stretch holds the loop between yield points while interactive
        batches are coming."""
        self.bulk_share = min(1.0, max(0.05, bulk_share))
        """The share of the time the bulk lane runs while interactive batches are coming."""
        self.answer_wait = answer_wait
        self.answer_budget = answer_budget
        self.clock = clock
        self.sleep = sleep
        self._slice_start = clock()
        self._part_began: float | None = None
        """When the bulk lane's last turn ended: the time since is what it ran."""
        self.rested = 0.0
        """Seconds the bulk lane has rested for its share (for tests and metrics)."""
        self._waited = 0.0
        """Seconds the yield points have waited since the last part began (at most
        `max_wait` per part, as the part itself)."""
        self._last_interactive: float | None = None
        self._interactive = 0
        self._awaited = 0
        """Requests interactive batches sent whose answers have not been handled yet."""
        self._answers_due: asyncio.TimerHandle | None = None
        self._answer_waited = 0.0
        """Seconds the bulk lane has waited for answers alone since the last part began."""
        self._idle = asyncio.Event()
        self._idle.set()
        self._no_batch = asyncio.Event()
        self._no_batch.set()
        self.yielded = 0
        """How many bulk parts waited for an interactive batch (for tests and metrics)."""

    @contextmanager
    def interactive(self) -> Iterator[None]:
        """Mark an interactive batch in flight while the block runs."""
        self._interactive += 1
        self._idle.clear()
        self._no_batch.clear()
        try:
            yield
        finally:
            self._interactive -= 1
            self._last_interactive = self.clock()
            self._maybe_idle()

    def expect_answers(self, requests: int) -> None:
        """An interactive batch sent `requests` that another service answers back: the bulk
        lane waits for the answers as for an interactive batch in flight, for at most
        `answer_wait` from the latest request."""
        if requests <= 0:
            return
        self._awaited += requests
        self._idle.clear()
        if self._answers_due is not None:
            self._answers_due.cancel()
        self._answers_due = asyncio.get_running_loop().call_later(
            self.answer_wait, self._stop_awaiting
        )

    def answered(self, answers: int) -> None:
        """An interactive batch brought `answers` to requests sent before."""
        if answers <= 0 or not self._awaited:
            return
        self._awaited = max(0, self._awaited - answers)
        if not self._awaited:
            self._stop_awaiting()

    @property
    def awaiting_answers(self) -> int:
        """Requests whose answers the bulk lane still waits for."""
        return self._awaited

    def _stop_awaiting(self) -> None:
        """The answers came, or `answer_wait` passed: stop waiting for any."""
        self._awaited = 0
        if self._answers_due is not None:
            self._answers_due.cancel()
            self._answers_due = None
        self._maybe_idle()

    def _maybe_idle(self) -> None:
        """Let the bulk lane go once no interactive batch is in flight and no answer is due."""
        if self._interactive == 0:
            self._no_batch.set()
            if self._awaited == 0:
                self._idle.set()

    async def _wait_for_interactive(self, most: float) -> None:
        """Wait, for at most `most` seconds, while an interactive batch is in flight, and while
        answers alone are due for what is left of the part's `answer_budget`."""
        started = self.clock()
        while not self._idle.is_set():
            left = most - (self.clock() - started)
            if left <= 0:
                return
            if self._interactive:
                try:
                    await asyncio.wait_for(self._no_batch.wait(), left)
                except TimeoutError:
                    return
                continue
            budget = self.answer_budget - self._answer_waited
            if budget <= 0:
                return
            wait, began = min(left, budget), self.clock()
            try:
                await asyncio.wait_for(self._idle.wait(), wait)
            except TimeoutError:
                self._answer_waited += wait
                return
            self._answer_waited += max(0.0, self.clock() - began)

    def part_size(self) -> int | None:
        """Inputs per bulk part now: `bulk_part` while interactive batches are coming, else
        None (the batch goes whole)."""
        if self._interactive or (
            self._last_interactive is not None
            and self.clock() - self._last_interactive < self.recent
        ):
            return self.bulk_part
        return None

    @property
    def interactive_in_flight(self) -> bool:
        """Whether an interactive batch is being handled now."""
        return self._interactive > 0

    async def bulk_turn(self) -> None:
        """Rest for the bulk share, then return when no interactive batch is in flight and no
        answer to one is due, or after `max_wait`; always lets the event loop run the
        interactive lane's ready callbacks first."""
        await asyncio.sleep(0)
        self._waited = 0.0
        self._answer_waited = 0.0
        await self._rest()
        try:
            if not self._idle.is_set():
                self.yielded += 1
                await self._wait_for_interactive(self.max_wait)
        finally:
            self._part_began = self.clock()

    async def bulk_done(self) -> None:
        """A bulk batch is delivered and marked: rest for its last stretch, and count nothing
        until the next batch's first turn (the lane waits for a fetch meanwhile)."""
        await self._rest()
        self._part_began = None

    async def _rest(self) -> None:
        """While interactive batches are coming, rest as long as the bulk share leaves of what
        the bulk lane ran since its last turn (at most `PACE_WINDOW` of it counts)."""
        if self.bulk_share >= 1.0 or self._part_began is None or self.part_size() is None:
            return
        ran = min(PACE_WINDOW, max(0.0, self.clock() - self._part_began))
        rest = ran * (1.0 / self.bulk_share - 1.0)
        if rest > 0:
            self.rested += rest
            await self.sleep(rest)

    async def give_way(self) -> None:
        """A yield point inside a bulk part (see `engram_platform.give_way`): wait while an
        interactive batch is in flight or an answer to one is due (at most what is left of
        `max_wait` since the part began, so a steady interactive stream cannot starve the
        part); while they are coming, let the loop run once the stretch has held it for
        `slice_seconds`; with none recent, return at once."""
        left = self.max_wait - self._waited
        if not self._idle.is_set() and left > 0:
            started = self.clock()
            await self._wait_for_interactive(left)
            self._waited += self.clock() - started
        elif self.part_size() is None or self.clock() - self._slice_start < self.slice_seconds:
            return
        else:
            await asyncio.sleep(0)
        self._slice_start = self.clock()
