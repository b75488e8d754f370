"""A write or an embedding result replayed after the memory service died between a row write and
the publish (the consumer marked nothing applied, so the input comes again): what the first pass
began is finished, and the events it never staged are staged under their own ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from engram_events import new_event
from engram_events.catalog import AGENT_DELETED
from engram_events.payloads.embeddings import RejectedItem
from engram_events.payloads.memories import AgentDeleted
from engram_memory.adapters.vectors import point_id
from engram_memory.domain.retention import RetentionPolicy
from engram_memory.domain.rows import MemoryRow
from tests.unit.memory.fakes import FakeRows
from tests.unit.memory.test_handlers import Pipeline, _tombstoned
from tests.unit.memory.test_inline_embedding import inline_pipeline
from tests.unit.memory.test_supersede_while_storing import NEWER, OLDER, superseded

pytestmark = pytest.mark.unit


class RowsDyingOnce(FakeRows):
    """Rows that raise once, at `where`: a supersession, a rejection once written, rows opened
    once written, or a withdrawal once written (after `before_withdrawal` ran); the process died
    right after the row write before it."""

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where: str | None = where
        self.before_withdrawal: Any = None

    def _die_once(self, here: str) -> None:
        if self.where == here:
            self.where = None
            raise ConnectionError("the process died here")

    async def supersede(
        self, tenant_id: str, memory_id: str, *, agent_id: str, by: str, held: str
    ) -> bool:
        self._die_once("supersede")
        return await super().supersede(tenant_id, memory_id, agent_id=agent_id, by=by, held=held)

    async def set_fields(
        self,
        tenant_id: str,
        memory_id: str,
        fields: Mapping[str, Any],
        *,
        drop_content: bool = False,
    ) -> None:
        await super().set_fields(tenant_id, memory_id, fields, drop_content=drop_content)
        if fields.get("status") == "rejected":
            self._die_once("rejection")

    async def set_fields_many(
        self,
        tenant_id: str,
        changes: Sequence[tuple[str, Mapping[str, Any]]],
        *,
        drop_content: bool = False,
    ) -> None:
        if self.where == "withdrawal" and self.before_withdrawal is not None:
            await self.before_withdrawal()
        await super().set_fields_many(tenant_id, changes, drop_content=drop_content)
        self._die_once("withdrawal")

    async def open_many(
        self, tenant_id: str, rows: Sequence[tuple[dict[str, Any], str]]
    ) -> list[MemoryRow | None]:
        opened = await super().open_many(tenant_id, rows)
        self._die_once("opening")
        return opened


async def test_a_replayed_store_still_supersedes_and_announces() -> None:
    rows = RowsDyingOnce("supersede")
    pipe = Pipeline(rows=rows)
    await pipe.open()
    await pipe.write(pipe.request("m1", OLDER))
    [newer] = await pipe.handlers.on_write_requested(pipe.request("m2", NEWER, supersedes="m1"))
    [computed] = await pipe.embedding.on_requested(newer)
    with pytest.raises(ConnectionError):
        await pipe.handlers.on_computed(computed)
    replayed = await pipe.handlers.on_computed(computed)
    assert [e.event_type for e in replayed] == ["memory.stored"]
    await superseded(pipe)


async def test_a_replayed_single_write_still_supersedes_and_announces() -> None:
    rows = RowsDyingOnce("supersede")
    pipe = await inline_pipeline(rows=rows)
    await pipe.handlers.on_single_write(pipe.request("m1", OLDER))
    newer = pipe.request("m2", NEWER, supersedes="m1")
    with pytest.raises(ConnectionError):
        await pipe.handlers.on_single_write(newer)
    assert getattr(await pipe.rows.get("t1", "m2"), "status", None) == "active", "stored, then died"
    replayed = await pipe.handlers.on_single_write(newer)
    assert [e.event_type for e in replayed] == ["memory.stored"]
    await superseded(pipe)


async def test_a_replayed_refusal_announces_the_rejection() -> None:
    rows = RowsDyingOnce("rejection")
    pipe = Pipeline(rows=rows)
    await pipe.open()
    [requested] = await pipe.handlers.on_write_requested(pipe.request("m1", OLDER))
    [computed] = await pipe.embedding.on_requested(requested)
    refused = computed.model_copy(
        update={
            "payload": computed.payload.model_copy(
                update={"items": [], "rejected": [RejectedItem(item_id="m1", reason="empty")]}
            )
        }
    )
    with pytest.raises(ConnectionError):
        await pipe.handlers.on_computed(refused)
    [again] = await pipe.handlers.on_computed(refused)
    assert (again.event_type, again.payload.reason) == ("memory.rejected", "embedder_empty")
    [third] = await pipe.handlers.on_computed(refused)
    assert third.event_id == again.event_id, "the same event each time"
    row = await pipe.rows.get("t1", "m1")
    assert row is not None and row.status == "rejected"


async def test_writes_refused_or_withdrawn_at_birth_are_announced_when_replayed() -> None:
    rows = RowsDyingOnce("opening")
    pipe = Pipeline(rows=rows)
    await pipe.open()
    await pipe.handlers.on_records_tombstoned([_tombstoned("rec-gone")])
    batch = [
        pipe.request("blank", "   "),
        pipe.request("orphan", "from a pruned record", derived_from=["rec-gone"]),
    ]
    with pytest.raises(ConnectionError):
        await pipe.handlers.on_writes_requested(batch)
    answers = await pipe.handlers.on_writes_requested(batch)
    assert [[e.event_type for e in a] for a in answers] == [
        ["memory.rejected"],
        ["memory.withdrawn"],
    ]
    statuses = {
        m: getattr(await pipe.rows.get("t1", m), "status", None) for m in ("blank", "orphan")
    }
    assert statuses == {"blank": "rejected", "orphan": "withdrawn"}


async def test_a_replayed_prune_removes_a_point_stored_meanwhile_and_reports_it() -> None:
    rows = RowsDyingOnce("withdrawal")
    pipe = Pipeline(rows=rows)
    await pipe.open()
    [requested] = await pipe.handlers.on_write_requested(
        pipe.request("m1", "derived from r1", derived_from=["rec-1"])
    )
    [computed] = await pipe.embedding.on_requested(requested)

    async def stored_between_the_point_removal_and_the_strip() -> None:
        await pipe.handlers.on_computed(computed)

    rows.before_withdrawal = stored_between_the_point_removal_and_the_strip
    tomb = _tombstoned("rec-1")
    with pytest.raises(ConnectionError):
        await pipe.handlers.on_records_tombstoned([tomb])
    assert getattr(await pipe.rows.get("t1", "m1"), "status", None) == "withdrawn"
    [answer] = await pipe.handlers.on_records_tombstoned([tomb])
    assert not isinstance(answer, BaseException)
    withdrawn, ack = answer
    assert (withdrawn.event_type, withdrawn.payload.memory_id) == ("memory.withdrawn", "m1")
    assert ack.payload.tombstoned_ids == ["m1"] and ack.payload.counts["memories"] == 1
    assert await pipe.store.get("memories", [point_id("t1", "m1")]) == [], "no point to recall"


async def test_a_replayed_agent_deletion_announces_every_memory_it_withdrew() -> None:
    rows = RowsDyingOnce("withdrawal")
    pipe = Pipeline(rows=rows)
    await pipe.open()
    await pipe.write(pipe.request("m1", OLDER))
    await pipe.write(pipe.request("m2", NEWER))
    gone = new_event(AGENT_DELETED, AgentDeleted(agent_id="a1"), tenant_id="t1")
    with pytest.raises(ConnectionError):
        await pipe.handlers.on_agent_deleted(gone)
    replayed = await pipe.handlers.on_agent_deleted(gone)
    assert sorted(e.payload.memory_id for e in replayed) == ["m1", "m2"]
    assert {e.event_type for e in replayed} == {"memory.withdrawn"}
    assert await pipe.store.count("memories", {"tenant_id": "t1"}) == 0


async def test_a_replayed_store_announces_what_its_retention_evicted() -> None:
    rows = RowsDyingOnce("withdrawal")
    pipe = Pipeline([RetentionPolicy(type="conversation", max_count=1)], rows=rows)
    await pipe.open()
    await pipe.write(pipe.request("c1", "chat number one", type="conversation"))
    [requested] = await pipe.handlers.on_write_requested(
        pipe.request("c2", "chat number two", type="conversation")
    )
    [computed] = await pipe.embedding.on_requested(requested)
    with pytest.raises(ConnectionError):
        await pipe.handlers.on_computed(computed)
    assert getattr(await pipe.rows.get("t1", "c1"), "status", None) == "withdrawn"
    replayed = await pipe.handlers.on_computed(computed)
    assert [(e.event_type, e.payload.memory_id) for e in replayed] == [
        ("memory.stored", "c2"),
        ("memory.withdrawn", "c1"),
    ]
