"""A memory deleted while its vector is being stored stays deleted: neither its row nor a point
comes back, whichever step of the delete lands between the store's two writes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, cast

import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import AGENT_DELETED
from engram_events.payloads.embeddings import RejectedItem
from engram_events.payloads.memories import AgentDeleted
from engram_memory.adapters.vectors import MemoryVectors, point_id
from engram_memory.domain.rows import MemoryRow
from engram_memory.ports import MemoryRowReads
from engram_memory.service.deletion import Deletions
from engram_vectors.port import VectorStore
from tests.unit.memory.fakes import FakeRows
from tests.unit.memory.test_handlers import Pipeline

pytestmark = pytest.mark.unit


class StagedOnRows:
    """The outbox write of a deletion, on the pipeline's rows; waits for `before` if given."""

    def __init__(self, rows: FakeRows, before: asyncio.Event | None = None) -> None:
        self.rows = rows
        self.before = before

    async def withdraw(
        self,
        tenant_id: str,
        changes: Sequence[tuple[str, Mapping[str, Any], Envelope[Any]]],
        *,
        keep_content: bool = False,
    ) -> None:
        if self.before is not None:
            await asyncio.wait_for(self.before.wait(), 2.0)
        for memory_id, fields, _ in changes:
            await self.rows.set_fields(tenant_id, memory_id, fields)


class PointsWithHooks(MemoryVectors):
    """The pipeline's points, with something run after a put and a wait before one."""

    def __init__(self, store: VectorStore, collection: str) -> None:
        super().__init__(store, collection)
        self.after_put: Any = None
        self.before_put: asyncio.Event | None = None
        self.removed = asyncio.Event()

    async def put_many(self, *args: Any, **kwargs: Any) -> Any:
        if self.before_put is not None:
            await asyncio.wait_for(self.before_put.wait(), 2.0)
        kept = await super().put_many(*args, **kwargs)
        if self.after_put is not None:
            await self.after_put()
        return kept

    async def remove(self, tenant_id: str, memory_ids: Sequence[str]) -> None:
        await super().remove(tenant_id, memory_ids)
        self.removed.set()


class RowsSignalling(FakeRows):
    """Rows that say when a store's update has been made, and can hold a withdrawal's row
    write until then."""

    def __init__(self) -> None:
        super().__init__()
        self.updated = asyncio.Event()
        self.hold_withdrawals = False

    async def set_fields_many(
        self,
        tenant_id: str,
        changes: Sequence[tuple[str, Mapping[str, Any]]],
        *,
        drop_content: bool = False,
    ) -> None:
        if self.hold_withdrawals:
            await asyncio.wait_for(self.updated.wait(), 2.0)
        await super().set_fields_many(tenant_id, changes, drop_content=drop_content)

    async def set_pending(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        fields: Mapping[str, Any],
        *,
        drop_content: bool = False,
    ) -> set[str]:
        done = await super().set_pending(tenant_id, memory_ids, fields, drop_content=drop_content)
        self.updated.set()
        return done


async def pipeline() -> tuple[Pipeline, PointsWithHooks, RowsSignalling]:
    """The handlers' pipeline storing through hooked points and signalling rows."""
    rows = RowsSignalling()
    pipe = Pipeline(rows=rows, vectors=PointsWithHooks)
    await pipe.open()
    assert isinstance(pipe.vectors, PointsWithHooks)
    return pipe, pipe.vectors, rows


def reads(rows: FakeRows) -> MemoryRowReads:
    """The fake rows as the deletion reads them (it reads one row by id)."""
    return cast(MemoryRowReads, rows)


async def settled(pipe: Pipeline) -> tuple[str, bool]:
    """m1's row status, and whether its point exists."""
    row = await pipe.rows.get("t1", "m1")
    assert row is not None
    return row.status, bool(await pipe.store.get("memories", [point_id("t1", "m1")]))


async def test_a_delete_made_while_the_vector_is_put_is_not_undone() -> None:
    pipe, points, _ = await pipeline()
    deletions = Deletions(reads(pipe.rows), points, StagedOnRows(pipe.rows))

    async def delete() -> None:
        assert await deletions.delete("t1", "a1", "m1")

    points.after_put = delete
    published = await pipe.write(pipe.request("m1", "the user likes tea"))
    assert "memory.stored" not in [e.event_type for e in published]
    assert await settled(pipe) == ("withdrawn", False)


async def test_a_delete_whose_row_write_lands_after_the_stores_leaves_no_point() -> None:
    pipe, points, rows = await pipeline()
    deletions = Deletions(reads(rows), points, StagedOnRows(rows, before=rows.updated))
    [requested] = await pipe.handlers.on_write_requested(pipe.request("m1", "the user likes tea"))
    [computed] = await pipe.embedding.on_requested(requested)
    points.before_put = points.removed
    await asyncio.gather(pipe.handlers.on_computed(computed), deletions.delete("t1", "a1", "m1"))
    assert await settled(pipe) == ("withdrawn", False)


async def test_an_agent_deleted_while_its_memory_is_stored_leaves_no_point() -> None:
    pipe, points, rows = await pipeline()
    [requested] = await pipe.handlers.on_write_requested(pipe.request("m1", "the user likes tea"))
    [computed] = await pipe.embedding.on_requested(requested)
    points.before_put = points.removed
    rows.hold_withdrawals = True
    gone = new_event(AGENT_DELETED, AgentDeleted(agent_id="a1"), tenant_id="t1")
    await asyncio.gather(pipe.handlers.on_computed(computed), pipe.handlers.on_agent_deleted(gone))
    assert await settled(pipe) == ("withdrawn", False)


class RowsDeletedAfterRead(RowsSignalling):
    """Rows that run `after_read` once, right after a lookup (the store's read of its rows)."""

    def __init__(self) -> None:
        super().__init__()
        self.after_read: Any = None

    async def get_many(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, MemoryRow]:
        found = await super().get_many(tenant_id, memory_ids)
        if self.after_read is not None:
            hook, self.after_read = self.after_read, None
            await hook()
        return found


async def test_a_delete_made_while_a_refusal_is_stored_stays_a_delete() -> None:
    rows = RowsDeletedAfterRead()
    pipe = Pipeline(rows=rows)
    await pipe.open()
    deletions = Deletions(reads(rows), pipe.vectors, StagedOnRows(rows))
    [requested] = await pipe.handlers.on_write_requested(pipe.request("m1", "the user likes tea"))
    [computed] = await pipe.embedding.on_requested(requested)
    refused = computed.model_copy(
        update={
            "payload": computed.payload.model_copy(
                update={"items": [], "rejected": [RejectedItem(item_id="m1", reason="empty")]}
            )
        }
    )

    async def delete() -> None:
        assert await deletions.delete("t1", "a1", "m1")

    rows.after_read = delete
    assert await pipe.handlers.on_computed(refused) == []
    assert await settled(pipe) == ("withdrawn", False)
