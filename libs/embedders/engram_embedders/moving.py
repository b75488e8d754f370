"""Moving a store's vectors to another embedder in the background, for any store: the spaces it
reads and writes while moving, and the job's lifecycle (start, resume, walk, verify, switch,
fail). A store says how to walk its items, copy a page, catch up, count and spot-check."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from engram_embedders.port import Embedder
from engram_embedders.reindex import (
    Reindex,
    ReindexFailed,
    SameSpace,
    Space,
    TargetUnavailable,
    counts_agree,
    may_start,
    sampled,
    target_collection,
)

log = logging.getLogger(__name__)

V = TypeVar("V")
Item = TypeVar("Item")
VERIFY_ATTEMPTS = 3
SAME_VECTOR = 0.99
"""A stored vector and the target embedder's vector of the same text agree at least this well."""

EmbedderFor = Callable[[str, int | None], Embedder]
"""An embedder of a kind (and, for hashing, a dimension)."""


@dataclass(frozen=True)
class Embedded(Generic[V]):
    """A collection and the embedder whose vector space it holds."""

    embedder: Embedder
    vectors: V

    @property
    def fingerprint(self) -> str:
        return self.embedder.provenance.fingerprint


class Moving(Generic[V]):
    """The space a store reads and writes, and during a reindex the one it moves to: writes land
    in both, reads stay on the old until `switch` swaps them in one assignment.

    With `reembeds` (the active space came from a reindex, so the embedding service may still
    compute vectors of the space left behind), a store embeds a write whose vectors are of
    another space with the active embedder instead of refusing it: never a mixed collection.
    Writes that `track` themselves let `settled` wait for those begun before the target existed.
    """

    def __init__(self, active: Embedded[V], *, reembeds: bool = False) -> None:
        self.active = active
        self.target: Embedded[V] | None = None
        self.reembeds = reembeds
        self._outside = 0
        self._quiet = asyncio.Condition()

    def space(self) -> tuple[Embedder, V]:
        """The active embedder and collection, read together so a switch never splits them."""
        active = self.active
        return active.embedder, active.vectors

    def begin(self, target: Embedded[V]) -> None:
        """From now on every write lands in the target too."""
        self.target = target

    def abandon(self) -> None:
        """A failed reindex: writes go to the active space only again."""
        self.target = None

    def switch(self) -> None:
        """Reads and writes move to the target, in one step of the event loop."""
        if self.target is not None:
            self.active, self.target = self.target, None
            self.reembeds = True

    def spaces(self) -> list[Embedded[V]]:
        """Where a write lands: the active space, and the target while one is moved to."""
        active, target = self.active, self.target
        return [active] if target is None else [active, target]

    async def track(self, write: Callable[[list[Embedded[V]]], Awaitable[None]]) -> None:
        """Run a write over the spaces read now; one that saw no target is counted until it ends."""
        spaces = self.spaces()
        outside = len(spaces) == 1
        self._outside += int(outside)
        try:
            await write(spaces)
        finally:
            if outside:
                self._outside -= 1
                async with self._quiet:
                    self._quiet.notify_all()

    async def settled(self) -> None:
        """Return once every tracked write begun without the target has ended (writes begun
        since land in both), so a walk that starts now misses none of them."""
        async with self._quiet:
            await self._quiet.wait_for(lambda: self._outside == 0)


class JobRecords(Protocol):
    """The persisted active space and reindex job (`ReindexDocument`, or a test's fake)."""

    async def load(self) -> tuple[Space | None, Reindex | None]: ...

    async def save(self, job: Reindex) -> None: ...

    async def switch(self, job: Reindex) -> None: ...


class ReindexDocument:
    """One document per store holding its active space and job, the switch one update: the
    store's collection serves every tenant, so the document is the store's, not a tenant's."""

    def __init__(self, db: Any, collection: str, store: str) -> None:
        self.state = db[collection]
        self.store = store

    async def load(self) -> tuple[Space | None, Reindex | None]:
        doc = await self.state.find_one({"_id": self.store})
        if doc is None:
            return None, None
        active = Space.of(doc["active"]) if doc.get("active") else None
        job = Reindex.of(doc["job"]) if doc.get("job") else None
        return active, job

    async def save(self, job: Reindex) -> None:
        await self.state.update_one(
            {"_id": self.store}, {"$set": {"job": job.as_doc()}}, upsert=True
        )

    async def switch(self, job: Reindex) -> None:
        """The new active space and the finished job, in one document update."""
        await self.state.update_one(
            {"_id": self.store},
            {"$set": {"active": job.target.as_doc(), "job": job.as_doc()}},
            upsert=True,
        )


class Reindexer(Generic[V, Item]):
    """One reindex at a time; its job document is saved after every page, so a restart resumes
    from the cursor (pages are upserts: walking one twice is harmless). A store subclasses it
    with its walk (`next_page`, `copy`, `catch_up`, `counts`, `spot_check`, `count_total`)."""

    noun = "items"
    """What the store's log lines count."""

    def __init__(
        self,
        records: JobRecords,
        moving: Moving[V],
        *,
        active: Space,
        embedder_for: EmbedderFor,
        open_vectors: Callable[[str, Embedder], Awaitable[V]],
        base_collection: str,
        page_size: int,
        verify_pause: float = 1.0,
        page_pause: float = 0.0,
    ) -> None:
        self.records = records
        self.moving = moving
        self.active = active
        self.embedder_for = embedder_for
        self.open_vectors = open_vectors
        self.base = base_collection
        self.page_size = page_size
        self.verify_pause = verify_pause
        self.page_pause = page_pause
        self.job: Reindex | None = None
        self.wake = asyncio.Event()

    async def count_total(self) -> int:
        """How many items the walk will copy, for progress."""
        raise NotImplementedError

    async def next_page(self, job: Reindex) -> tuple[list[Item], Reindex] | None:
        """The next page after the job's cursor and the job advanced past it; None at the end."""
        raise NotImplementedError

    async def copy(self, target: Embedded[V], page: Sequence[Item]) -> None:
        """Embed a page into the target, then correct what changed while it was embedded."""
        raise NotImplementedError

    async def catch_up(self, target: Embedded[V]) -> None:
        """Walk again what may have been written around the start."""
        raise NotImplementedError

    async def counts(self, target: Embedded[V]) -> tuple[object, object]:
        """The source's and the target's counts, compared by verification."""
        raise NotImplementedError

    async def spot_check(self, target: Embedded[V], sample: Sequence[Item]) -> None:
        """ReindexFailed unless the sampled items still live are in the target, each with its
        text's own vector (`same_vector`)."""
        raise NotImplementedError

    def progress(self) -> dict[str, Any] | None:
        now = datetime.now(UTC)
        return None if self.job is None else self.job.view(now)

    async def start(self, embedder: str, hashing_dimension: int | None = None) -> Reindex:
        """Open the target collection, send writes to it too, and wake the walker."""
        may_start(self.job)
        try:
            target_embedder = self.embedder_for(embedder, hashing_dimension)
            fingerprint = target_embedder.provenance.fingerprint
        except Exception as error:
            raise TargetUnavailable(f"{embedder}: {type(error).__name__}: {error}") from error
        if fingerprint == self.moving.active.fingerprint:
            raise SameSpace("the store already uses this embedder")
        now = datetime.now(UTC)
        name = f"{target_collection(self.base, fingerprint)}-{now:%Y%m%d%H%M%S}"
        vectors = await self.open_vectors(name, target_embedder)
        target = Space(name, embedder, hashing_dimension)
        job = Reindex(self.active, target, fingerprint, now, total=await self.count_total())
        await self.records.save(job)
        self.moving.begin(Embedded(target_embedder, vectors))
        self.job = job
        self.wake.set()
        log.info("reindex started", extra={"collection": name, self.noun: job.total})
        return job

    async def resume(self, job: Reindex) -> None:
        """At start-up: a running job's target reopened, writes sent to it, the walker woken."""
        self.job = job
        if job.state != "running":
            return
        target_embedder = self.embedder_for(job.target.embedder, job.target.hashing_dimension)
        vectors = await self.open_vectors(job.target.collection, target_embedder)
        self.moving.begin(Embedded(target_embedder, vectors))
        self.wake.set()
        log.info("reindex resumed", extra={"collection": job.target.collection})

    async def run(self) -> None:
        """The background loop: walk whenever a job is started or resumed."""
        while True:
            await self.wake.wait()
            self.wake.clear()
            if self.job is not None and self.job.state == "running":
                await self._run_job()

    async def _run_job(self) -> None:
        try:
            await self.walk()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            assert self.job is not None
            log.exception("reindex failed")
            self.moving.abandon()
            self.job = self.job.failed(datetime.now(UTC), f"{type(error).__name__}: {error}")
            await self.records.save(self.job)

    async def walk(self) -> None:
        """Every item after the cursor, page by page; then catch up, verify and switch."""
        assert self.job is not None and self.moving.target is not None
        target = self.moving.target
        await self.moving.settled()
        sample: list[Item] = []
        while found := await self.next_page(self.job):
            page, advanced = found
            await self.copy(target, page)
            sample = sampled(sample, page)
            self.job = advanced
            await self.records.save(self.job)
            await asyncio.sleep(self.page_pause)
        for attempt in range(VERIFY_ATTEMPTS):
            await self.catch_up(target)
            source, copied = await self.counts(target)
            if counts_agree(source, copied):
                break
            log.warning(
                "reindex counts differ", extra={"source": source, "target": copied, "try": attempt}
            )
            await asyncio.sleep(self.verify_pause)
        else:
            raise ReindexFailed(f"the new collection holds {copied} points, the old {source}")
        await self.spot_check(target, sample)
        finished = self.job.finished(datetime.now(UTC))
        await self.records.switch(finished)
        self.moving.switch()
        self.active, self.job = finished.target, finished
        log.info("reindex switched", extra={"collection": self.job.target.collection})


async def same_vector(embedder: Embedder, text: str, stored: ArrayLike) -> bool:
    """Whether a stored vector is the one this embedder gives the text now."""
    fresh = (await embedder.embed([text])).vectors[0]
    return float(np.dot(fresh, np.asarray(stored, dtype=np.float32))) >= SAME_VECTOR
