"""Moving the memory store to another embedder in the background: walk every live row into a new
collection (writes meanwhile land in both), catch up, verify, then switch recall over."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from engram_embedders import Embedder
from engram_memory.domain.reindex import (
    LIVE,
    Reindex,
    Space,
    counts_agree,
    may_start,
    target_collection,
)
from engram_memory.ports import MovablePoints, ReindexRecords, ReindexRows
from engram_memory.service.moving import Embedded, MovingVectors, embed_into

log = logging.getLogger(__name__)

PAGE = 256
SAMPLE = 16
CATCH_UP_MARGIN = timedelta(seconds=60)
"""Rows stored within this long of the start are walked again before the switch: a write whose
points were put just before the target existed may have been pending when its page was read
(later writes were put into both collections)."""
VERIFY_ATTEMPTS = 3

EmbedderFor = Callable[[str, int | None], Embedder]
"""An embedder of a kind (and, for hashing, a dimension)."""
OpenVectors = Callable[[str, Embedder], Awaitable[MovablePoints]]
"""Open (creating) a collection for an embedder: the service's MemoryVectors."""


class SameSpace(Exception):
    """The target embedder is the one recall already uses."""


class TargetUnavailable(Exception):
    """The target embedder cannot be built here (model files missing, bad options)."""


class ReindexFailed(Exception):
    """Verification found the new collection unlike the old one."""


class Reindexer:
    """One reindex at a time; its job document is saved after every page, so a restart resumes
    from the cursor (pages are upserts: walking one twice is harmless)."""

    def __init__(
        self,
        records: ReindexRecords,
        rows: ReindexRows,
        moving: MovingVectors,
        *,
        active: Space,
        embedder_for: EmbedderFor,
        open_vectors: OpenVectors,
        base_collection: str,
        page_size: int = PAGE,
        verify_pause: float = 1.0,
        page_pause: float = 0.0,
    ) -> None:
        self.records = records
        self.rows = rows
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
            raise SameSpace("recall already uses this embedder")
        now = datetime.now(UTC)
        name = f"{target_collection(self.base, fingerprint)}-{now:%Y%m%d%H%M%S}"
        vectors = await self.open_vectors(name, target_embedder)
        target = Space(name, embedder, hashing_dimension)
        job = Reindex(self.active, target, fingerprint, now, total=await self.rows.count_live())
        await self.records.save(job)
        self.moving.begin(Embedded(target_embedder, vectors))
        self.job = job
        self.wake.set()
        log.info("reindex started", extra={"collection": name, "memories": job.total})
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
        """Every live row after the cursor, page by page; then catch up, verify and switch."""
        assert self.job is not None and self.moving.target is not None
        target = self.moving.target
        sample: list[dict[str, Any]] = []
        while page := await self.rows.page(self.job.cursor, self.page_size):
            await self._copy(target, page)
            sample = _sampled(sample, page)
            self.job = self.job.advanced(page[-1]["_id"], len(page))
            await self.records.save(self.job)
            await asyncio.sleep(self.page_pause)
        for attempt in range(VERIFY_ATTEMPTS):
            await self._catch_up(target)
            source, copied = await self.moving.active.vectors.total(), await target.vectors.total()
            if counts_agree(source, copied):
                break
            log.warning(
                "reindex counts differ", extra={"source": source, "target": copied, "try": attempt}
            )
            await asyncio.sleep(self.verify_pause)
        else:
            raise ReindexFailed(f"the new collection holds {copied} points, the old {source}")
        await self._spot_check(target, sample)
        finished = self.job.finished(datetime.now(UTC))
        await self.records.switch(finished)
        self.moving.switch()
        self.active, self.job = finished.target, finished
        log.info("reindex switched", extra={"collection": self.job.target.collection})

    async def _copy(self, target: Embedded, page: Sequence[dict[str, Any]]) -> None:
        """Embed a page into the target, then read its rows again: one withdrawn or superseded
        while it was embedded gets its point removed or its status rewritten."""
        await embed_into(target, [(row, (), row["status"]) for row in page])
        again = await self.rows.by_ids([row["_id"] for row in page])
        for row in page:
            now = again.get(row["_id"])
            if now is None or now["status"] not in LIVE:
                await target.vectors.remove(row["tenant_id"], [row["memory_id"]])
            elif now["status"] != row["status"]:
                await target.vectors.set_status(
                    row["tenant_id"],
                    row["memory_id"],
                    now["status"],
                    superseded_by=now.get("superseded_by"),
                )

    async def _catch_up(self, target: Embedded) -> None:
        """Rows stored around the start, walked again."""
        assert self.job is not None
        since = self.job.started_at - CATCH_UP_MARGIN
        until = self.job.started_at + CATCH_UP_MARGIN
        after: str | None = None
        while page := await self.rows.stored_between(since, until, after, self.page_size):
            await self._copy(target, page)
            after = page[-1]["_id"]

    async def _spot_check(self, target: Embedded, sample: Sequence[dict[str, Any]]) -> None:
        """Sampled memories still live have a point in the target with their content and the
        vector the target embedder gives that content now."""
        current = await self.rows.by_ids([row["_id"] for row in sample])
        live = [row for row in sample if current.get(row["_id"], {}).get("status") in LIVE]
        for row in live:
            found = await target.vectors.points(row["tenant_id"], [row["memory_id"]])
            point = found.get(row["memory_id"])
            if point is None or point.payload.get("content") != row.get("content"):
                raise ReindexFailed(f"memory {row['memory_id']} is missing from the new collection")
            fresh = (await target.embedder.embed([str(row.get("content") or "")])).vectors[0]
            stored = np.asarray(point.vector, dtype=np.float32)
            if float(np.dot(fresh, stored)) < 0.99:
                raise ReindexFailed(f"memory {row['memory_id']} has a vector of another space")


def _sampled(sample: list[dict[str, Any]], page: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A few rows of every page kept, at most SAMPLE in all (the first and latest pages)."""
    if not page:
        return sample
    picked = random.sample(list(page), min(2, len(page)))
    kept = sample + picked
    return kept[: SAMPLE // 2] + kept[-(SAMPLE // 2) :] if len(kept) > SAMPLE else kept
