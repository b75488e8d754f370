"""Moving the memory store to another embedder in the background: walk every live row into a new
collection (writes meanwhile land in both), catch up, verify, then switch recall over."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from engram_embedders.moving import Embedded, JobRecords, Moving, Reindexer, same_vector
from engram_embedders.reindex import Reindex, ReindexFailed
from engram_memory.domain.reindex import LIVE
from engram_memory.domain.rows import MemoryRow
from engram_memory.ports import MovablePoints, ReindexRows
from engram_memory.service.moving import embed_into

PAGE = 256
CATCH_UP_MARGIN = timedelta(seconds=60)
"""Rows stored within this long of the start are walked again before the switch: a write whose
points were put just before the target existed may have been pending when its page was read
(later writes were put into both collections)."""


class MemoryReindexer(Reindexer[MovablePoints, MemoryRow]):
    """The memory store's walk: every tenant's live rows in key order."""

    noun = "memories"

    def __init__(
        self,
        records: JobRecords,
        rows: ReindexRows,
        moving: Moving[MovablePoints],
        *,
        page_size: int = PAGE,
        **options: Any,
    ) -> None:
        super().__init__(records, moving, page_size=page_size, **options)
        self.rows = rows

    async def count_total(self) -> int:
        return await self.rows.count_live()

    async def next_page(self, job: Reindex) -> tuple[list[MemoryRow], Reindex] | None:
        page = await self.rows.page(job.cursor, self.page_size)
        return (page, job.advanced(self.rows.key(page[-1]), len(page))) if page else None

    async def copy(self, target: Embedded[MovablePoints], page: Sequence[MemoryRow]) -> None:
        """Embed a page into the target, then read its rows again: one withdrawn or superseded
        while it was embedded gets its point removed or its status rewritten."""
        await embed_into(target, [(row, (), row.status) for row in page])
        again = await self.rows.by_keys([self.rows.key(row) for row in page])
        for row in page:
            now = again.get(self.rows.key(row))
            if now is None or now.status not in LIVE:
                await target.vectors.remove(row.tenant_id, [row.memory_id])
            elif now.status != row.status:
                await target.vectors.set_status(
                    row.tenant_id,
                    row.memory_id,
                    now.status,
                    superseded_by=now.superseded_by,
                )

    async def catch_up(self, target: Embedded[MovablePoints]) -> None:
        """Rows stored around the start, walked again."""
        assert self.job is not None
        since = self.job.started_at - CATCH_UP_MARGIN
        until = self.job.started_at + CATCH_UP_MARGIN
        after: str | None = None
        while page := await self.rows.stored_between(since, until, after, self.page_size):
            await self.copy(target, page)
            after = self.rows.key(page[-1])

    async def counts(self, target: Embedded[MovablePoints]) -> tuple[object, object]:
        return await self.moving.active.vectors.total(), await target.vectors.total()

    async def spot_check(
        self, target: Embedded[MovablePoints], sample: Sequence[MemoryRow]
    ) -> None:
        """Sampled memories still live have a point in the target with their content and the
        vector the target embedder gives that content now."""
        current = await self.rows.by_keys([self.rows.key(row) for row in sample])
        live = [row for row in sample if _live(current.get(self.rows.key(row)))]
        for row in live:
            found = await target.vectors.points(row.tenant_id, [row.memory_id])
            point = found.get(row.memory_id)
            if point is None or point.payload.get("content") != row.content:
                raise ReindexFailed(f"memory {row.memory_id} is missing from the new collection")
            if not await same_vector(target.embedder, row.content or "", point.vector):
                raise ReindexFailed(f"memory {row.memory_id} has a vector of another space")


def _live(row: MemoryRow | None) -> bool:
    """A row still there and live: its point must be in the new collection."""
    return row is not None and row.status in LIVE
