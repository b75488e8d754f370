"""A memory superseded while its own vector is being stored ends `superseded`, row and point,
whichever of the two stores lands first: recall never shows a replaced memory as current, and
no row is left pending for ever."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from engram_memory.adapters.vectors import point_id
from engram_memory.domain.rows import MemoryRow
from tests.unit.memory.fakes import FakeRows
from tests.unit.memory.test_delete_while_storing import PointsWithHooks
from tests.unit.memory.test_handlers import Pipeline

pytestmark = pytest.mark.unit

OLDER = "the office is in Paris"
NEWER = "the office moved to Lyon"


class RowsTouched(FakeRows):
    """Rows that run a hook once, right after the older memory's row is first read or
    conditionally updated by someone else's pass."""

    def __init__(self) -> None:
        super().__init__()
        self.hook: Callable[[], Awaitable[Any]] | None = None

    async def get(self, tenant_id: str, memory_id: str) -> MemoryRow | None:
        row = await super().get(tenant_id, memory_id)
        await self._touched(memory_id)
        return row

    async def supersede(
        self, tenant_id: str, memory_id: str, *, agent_id: str, by: str, held: str
    ) -> bool:
        done = await super().supersede(tenant_id, memory_id, agent_id=agent_id, by=by, held=held)
        await self._touched(memory_id)
        return done

    async def _touched(self, memory_id: str) -> None:
        if self.hook is not None and memory_id == "m1":
            hook, self.hook = self.hook, None
            await hook()


async def superseded(pipe: Pipeline) -> None:
    """m1 is superseded by m2 in its row and its point; m2 is the one active memory."""
    older = await pipe.rows.get("t1", "m1")
    assert older is not None
    assert (older.status, older.superseded_by) == ("superseded", "m2")
    [point] = await pipe.store.get("memories", [point_id("t1", "m1")])
    assert (point.payload["status"], point.payload["superseded_by"]) == ("superseded", "m2")
    assert await pipe.store.count("memories", {"status": "active"}) == 1
    newer = await pipe.rows.get("t1", "m2")
    assert newer is not None and newer.status == "active"


async def test_a_newer_version_stored_between_the_older_ones_point_and_row() -> None:
    pipe = Pipeline(vectors=PointsWithHooks)
    await pipe.open()
    assert isinstance(pipe.vectors, PointsWithHooks)
    points = pipe.vectors
    [requested] = await pipe.handlers.on_write_requested(pipe.request("m1", OLDER))
    [computed] = await pipe.embedding.on_requested(requested)

    async def newer_written() -> None:
        points.after_put = None
        await pipe.write(pipe.request("m2", NEWER, supersedes="m1"))

    points.after_put = newer_written
    published = await pipe.handlers.on_computed(computed)
    assert "memory.stored" in [e.event_type for e in published]
    await superseded(pipe)


async def test_the_older_version_stored_while_the_newer_one_supersedes_it() -> None:
    rows = RowsTouched()
    pipe = Pipeline(rows=rows)
    await pipe.open()
    [older] = await pipe.handlers.on_write_requested(pipe.request("m1", OLDER))
    [older_computed] = await pipe.embedding.on_requested(older)
    [newer] = await pipe.handlers.on_write_requested(pipe.request("m2", NEWER, supersedes="m1"))
    [newer_computed] = await pipe.embedding.on_requested(newer)

    async def older_stored() -> None:
        await pipe.handlers.on_computed(older_computed)

    rows.hook = older_stored
    await pipe.handlers.on_computed(newer_computed)
    assert rows.hook is None, "the newer version's pass never looked at the older row"
    await superseded(pipe)


async def test_a_replayed_newer_version_leaves_the_older_one_superseded_once() -> None:
    pipe = Pipeline()
    await pipe.open()
    await pipe.write(pipe.request("m1", OLDER))
    written = pipe.request("m2", NEWER, supersedes="m1")
    await pipe.write(written)
    await pipe.write(written)
    await superseded(pipe)
