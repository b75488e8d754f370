"""Single writes embedded in the memory service's own pass: stored at once with the embedder's
provenance, replay-safe, and handed to the embedding service when the model call fails."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from engram_embedders import Embeddings
from engram_events.content import ContentLimits
from engram_events.payloads.embeddings import VectorProvenance
from engram_memory.adapters.vectors import point_id
from engram_memory.domain.rows import MemoryRow
from engram_memory.service.dedup import Dedup
from engram_memory.service.inline import InlineEmbedding
from engram_memory.service.storing import Storing
from engram_memory.service.writes import Writes
from tests.unit.memory.fakes import CountingEmbedder, FakeRows
from tests.unit.memory.test_handlers import Pipeline

pytestmark = pytest.mark.unit


class FailingEmbedder(CountingEmbedder):
    """An embedder whose model call fails (a broken model file, a remote endpoint down)."""

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        self.calls += 1
        raise RuntimeError("model unavailable")


async def inline_pipeline(
    embedder: CountingEmbedder | None = None, rows: FakeRows | None = None
) -> Pipeline:
    """The handlers' pipeline with single writes embedded inline by `embedder` (the pipeline's
    own counting embedder unless named: the one the embedding service would use)."""
    pipe = Pipeline(rows=rows)
    await pipe.open()
    chosen = embedder or pipe.embedder
    h = pipe.handlers
    h.inline = InlineEmbedding(h.writes, h.storing, lambda: chosen)
    return pipe


def types(events: Sequence[object]) -> list[str]:
    return [getattr(e, "event_type", "?") for e in events]


async def test_a_single_write_is_stored_in_one_pass_with_the_embedders_provenance() -> None:
    pipe = await inline_pipeline()
    published = await pipe.handlers.on_single_write(pipe.request("m1", "the user likes tea"))
    assert types(published) == ["memory.stored"]
    assert pipe.embedder.texts == ["the user likes tea"]
    row = await pipe.rows.get("t1", "m1")
    p = pipe.embedder.provenance
    assert row is not None and row.status == "active"
    assert row.provenance == {**p.model_dump(), "fingerprint": p.fingerprint}
    assert published[0].payload.provenance.fingerprint == p.fingerprint
    [point] = await pipe.store.get("memories", [point_id("t1", "m1")])
    expected = (await pipe.embedder.inner.embed(["the user likes tea"])).vectors[0]
    assert list(point.vector) == pytest.approx(list(expected), abs=1e-6)


async def test_a_retried_single_write_of_a_stored_memory_is_not_stored_again() -> None:
    pipe = await inline_pipeline()
    await pipe.handlers.on_single_write(pipe.request("m1", "the user likes tea"))
    stored = getattr(await pipe.rows.get("t1", "m1"), "stored_at", None)
    retried = pipe.request("m1", "the user likes tea")
    assert await pipe.handlers.on_single_write(retried) == [], "another event: nothing to finish"
    assert getattr(await pipe.rows.get("t1", "m1"), "stored_at", None) == stored


async def test_a_replayed_single_write_duplicates_nothing() -> None:
    pipe = await inline_pipeline()
    event = pipe.request("m1", "the user likes tea")
    [first] = await pipe.handlers.on_single_write(event)
    assert first.event_type == "memory.stored"
    stored = getattr(await pipe.rows.get("t1", "m1"), "stored_at", None)
    [again] = await pipe.handlers.on_single_write(event)
    assert again.event_id == first.event_id, "the same announcement, staged again"
    assert await pipe.store.count("memories", {"tenant_id": "t1"}) == 1
    assert getattr(await pipe.rows.get("t1", "m1"), "stored_at", None) == stored


class RowsOpenedAfterTheModelStarts(FakeRows):
    """Rows whose insert waits until the model call has begun: a pass that embeds only after
    opening its rows never finishes."""

    def __init__(self, started: asyncio.Event) -> None:
        super().__init__()
        self.started = started

    async def open_many(
        self, tenant_id: str, rows: Sequence[tuple[dict[str, Any], str]]
    ) -> list[MemoryRow | None]:
        await asyncio.wait_for(self.started.wait(), 2.0)
        return await super().open_many(tenant_id, rows)


class SignallingEmbedder(CountingEmbedder):
    """Says when its model call begins."""

    def __init__(self, started: asyncio.Event) -> None:
        super().__init__()
        self.started = started

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        self.started.set()
        return await super().embed(texts)


async def test_the_model_call_runs_while_the_rows_are_opened() -> None:
    started = asyncio.Event()
    pipe = Pipeline()
    pipe.rows = RowsOpenedAfterTheModelStarts(started)
    pipe.embedder = SignallingEmbedder(started)
    await pipe.open()
    writes = Writes(
        pipe.rows,
        Dedup(pipe.slots, pipe.rows),
        ContentLimits(min_chars=2, max_chars=200),
        fingerprint=lambda: pipe.embedder.provenance.fingerprint,
    )
    inline = InlineEmbedding(
        writes, Storing(pipe.rows, pipe.vectors, pipe.retention), lambda: pipe.embedder
    )
    [published] = await inline.requested([pipe.request("m1", "the user likes tea")])
    assert types(published) == ["memory.stored"]
    assert pipe.embedder.calls == 1
    assert getattr(await pipe.rows.get("t1", "m1"), "status", None) == "active"


async def test_a_write_refused_for_its_content_costs_no_model_call() -> None:
    pipe = await inline_pipeline()
    [published] = await pipe.handlers.on_single_writes([pipe.request("m1", "   ")])
    assert types(published) == ["memory.rejected"]
    assert pipe.embedder.calls == 0


async def test_a_failed_model_call_leaves_the_write_to_the_embedding_service() -> None:
    pipe = await inline_pipeline(FailingEmbedder())
    event = pipe.request("m1", "the user likes tea")
    [requested] = await pipe.handlers.on_single_write(event)
    assert requested.event_type == "embedding.requested"
    row = await pipe.rows.get("t1", "m1")
    assert row is not None and row.status == "pending"
    [computed] = await pipe.embedding.on_requested(requested)
    assert types(await pipe.handlers.on_computed(computed)) == ["memory.stored"]
    assert getattr(await pipe.rows.get("t1", "m1"), "status", None) == "active"


async def test_a_carried_vector_of_this_embedder_is_stored_without_a_model_call() -> None:
    pipe = await inline_pipeline()
    p = pipe.embedder.provenance
    vector = [1.0] + [0.0] * (p.dimension - 1)
    made = VectorProvenance.model_validate({**p.model_dump(), "fingerprint": p.fingerprint})
    carried = pipe.request("m1", "the user likes tea", vector=vector, vector_provenance=made)
    assert types(await pipe.handlers.on_single_write(carried)) == ["memory.stored"]
    assert pipe.embedder.calls == 0
    [point] = await pipe.store.get("memories", [point_id("t1", "m1")])
    assert list(point.vector) == vector


async def test_a_batch_answers_each_input_as_if_handled_alone_with_one_model_call() -> None:
    pipe = await inline_pipeline()
    older = pipe.request("old", "the team meets in room 4")
    assert types(await pipe.handlers.on_single_write(older)) == ["memory.stored"]
    batch = [
        pipe.request("ok", "the user likes tea"),
        pipe.request("blank", "   "),
        pipe.request("new", "the team meets in room 9", supersedes="old"),
        pipe.request("same", "the user likes tea"),
    ]
    answers = await pipe.handlers.on_single_writes(batch)
    assert [types(a) for a in answers] == [
        ["memory.stored"],
        ["memory.rejected"],
        ["memory.stored"],
        ["memory.rejected"],
    ]
    assert answers[3][0].payload.duplicate_of == "ok"
    assert pipe.embedder.calls == 2
    assert getattr(await pipe.rows.get("t1", "old"), "status", None) == "superseded"
    assert await pipe.store.count("memories", {"tenant_id": "t1", "status": "active"}) == 2


async def test_without_inline_embedding_a_single_write_asks_the_embedding_service() -> None:
    pipe = Pipeline()
    await pipe.open()
    published = await pipe.handlers.on_single_write(pipe.request("m1", "the user likes tea"))
    assert types(published) == ["embedding.requested"]
    assert pipe.embedder.calls == 0


async def test_a_call_made_ahead_for_a_write_that_needs_none_is_cancelled() -> None:
    pipe = await inline_pipeline()
    assert types(await pipe.handlers.on_single_write(pipe.request("m1", "tea"))) == [
        "memory.stored"
    ]
    [answer] = await pipe.handlers.on_single_writes([pipe.request("m2", "tea")])
    for _ in range(3):
        await asyncio.sleep(0)
    assert types(answer) == ["memory.rejected"]
    assert answer[0].payload.duplicate_of == "m1"
    assert pipe.embedder.calls == 1
