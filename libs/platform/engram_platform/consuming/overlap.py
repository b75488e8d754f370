"""Two fetches in flight, for a stateless consumer whose look-ahead feeds a model.

Without this, the model idles at every fetch boundary: the last answers are sent and
acknowledged, the offsets committed, the next fetch read and decoded, and only then does the
look-ahead queue the next model batches (40-100 ms per fetch on two busy cores). Here the next
fetch is read and shown to the look-ahead while the previous one is still being completed.
Fetches still complete in order, and each commits its own offsets once its events are out.

A failed fetch seeks its partitions back to its first offsets, so it is read again; the fetch
behind it is dropped and its partitions sought back too (to the failed fetch's first offsets
where they share one), whether it was read before the failed fetch's seek or after. A commit refused
by a rebalance is logged: the partition's new owner reads those inputs again, and their
answers have derived ids that consumers dedupe.

A pipelined consumer has no parked lane (it keeps no state, and its look-ahead has already
queued the model's work in fetch order): a transient failure backs off in place, holding the
fetch, as `retrying.Attempts` does without `park`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aiokafka import TopicPartition
from aiokafka.errors import KafkaError

from engram_platform.consuming.messages import Outcome, PreparedBatch

log = logging.getLogger(__name__)
DRAIN_SECONDS = 10.0
"""How long shutdown waits for the fetch in flight before leaving it to be read again."""


class KafkaPositions(Protocol):
    """The parts of an aiokafka consumer this needs."""

    async def commit(self, offsets: dict[TopicPartition, int]) -> None: ...

    def seek(self, partition: TopicPartition, offset: int) -> None: ...


class BatchSteps(Protocol):
    """A consumer cut into what can run early and what must run in order."""

    async def prepare_batch(self, records: Sequence[Any]) -> PreparedBatch: ...

    async def complete_batch(self, batch: PreparedBatch) -> list[Outcome]: ...


class UpstreamFailed(Exception):
    """The fetch before this one failed, so this one was not completed either."""


@dataclass
class FetchInFlight:
    """One fetch being completed, and where each of its partitions starts and ends."""

    task: asyncio.Future[None]
    first: dict[TopicPartition, int]


def bounds(records: Sequence[Any]) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
    """The first offset, and the offset to commit (one past the last), per partition."""
    first: dict[TopicPartition, int] = {}
    after: dict[TopicPartition, int] = {}
    for record in records:
        tp = TopicPartition(record.topic, record.partition)
        first[tp] = min(first.get(tp, record.offset), record.offset)
        after[tp] = max(after.get(tp, 0), record.offset + 1)
    return first, after


class OverlappedFetches:
    """Completes each fetch after the one before it, while the next is read and prepared."""

    def __init__(self, steps: BatchSteps) -> None:
        self.steps = steps
        self._in_flight: FetchInFlight | None = None

    async def on_fetch(self, records: Sequence[Any], kafka: KafkaPositions) -> None:
        """Prepare this fetch now, complete it after the previous one, and return once the
        previous one is done (so at most two are in flight)."""
        first, after = bounds(records)
        try:
            batch = await self.steps.prepare_batch(records)
        except Exception:
            rewind(kafka, first)
            raise
        previous = self._in_flight
        current = FetchInFlight(
            asyncio.ensure_future(self._complete(previous, batch, first, after, kafka)), first
        )
        self._in_flight = current
        if (failed_fetch := await failed_before(previous)) is not None:
            current.task.cancel()
            await asyncio.wait([current.task])
            failed(current.task)
            self._in_flight = None
            rewind(kafka, {tp: min(o, failed_fetch.first.get(tp, o)) for tp, o in first.items()})

    async def drain(self) -> None:
        """Let the fetch in flight finish (on shutdown); what does not is read again later."""
        fetch, self._in_flight = self._in_flight, None
        await drain(fetch)

    async def _complete(
        self,
        previous: FetchInFlight | None,
        batch: PreparedBatch,
        first: dict[TopicPartition, int],
        after: dict[TopicPartition, int],
        kafka: KafkaPositions,
    ) -> None:
        """Wait for the fetch before, handle this one, then commit its offsets."""
        if await failed_before(previous) is not None:
            raise UpstreamFailed()
        await commit_after(self.steps.complete_batch(batch), first, after, kafka)


async def commit_after(
    step: Awaitable[Any],
    first: dict[TopicPartition, int],
    after: dict[TopicPartition, int],
    kafka: KafkaPositions,
) -> None:
    """A fetch's last step, then its offsets committed; a failed step seeks the fetch back to
    be read again. A commit refused by a rebalance leaves the inputs to the partitions' owner."""
    try:
        await step
    except Exception:
        log.exception("a fetch failed; reading it again", extra={"partitions": len(first)})
        rewind(kafka, first)
        raise
    try:
        await kafka.commit(after)
    except KafkaError as exc:
        log.warning("offsets not committed (%s); the partitions' owner reads them again", exc)


async def failed_before(previous: FetchInFlight | None) -> FetchInFlight | None:
    """Wait for the fetch before this one (if any); that fetch if it failed, else None."""
    if previous is None:
        return None
    await asyncio.wait([previous.task])
    return previous if failed(previous.task) else None


async def drain(fetch: FetchInFlight | None) -> None:
    """Wait a while for a fetch's task on shutdown; one that does not finish is cancelled (its
    fetch is read again by whoever owns the partitions next)."""
    if fetch is None:
        return
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            await asyncio.wait([fetch.task])
    except TimeoutError:
        fetch.task.cancel()
        return
    failed(fetch.task)


def failed(task: asyncio.Future[None]) -> bool:
    """Whether a finished fetch failed (its exception is then taken, so it is not reported
    again as never retrieved)."""
    return task.cancelled() or task.exception() is not None


def rewind(kafka: KafkaPositions, offsets: dict[TopicPartition, int]) -> None:
    """Seek each partition back; one no longer assigned to us is someone else's to read."""
    for tp, offset in offsets.items():
        try:
            kafka.seek(tp, offset)
        except (KafkaError, AssertionError, ValueError) as exc:
            log.warning("could not seek %s back (%s)", tp, exc)
