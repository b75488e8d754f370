"""The reindex: its state as data, writes landing in both spaces, the walk, resume and switch."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram_embedders import Embedder, HashingEmbedder
from engram_embedders.reindex import (
    Reindex,
    ReindexRunning,
    SameSpace,
    Space,
    TargetUnavailable,
    may_start,
    target_collection,
)
from engram_memory.adapters.rows import memory_row
from engram_memory.adapters.vectors import MemoryVectors
from engram_memory.domain.reindex import LIVE
from engram_memory.domain.rows import MemoryRow
from engram_memory.service.moving import Embedded, MovingVectors
from engram_memory.service.recall import Recall
from engram_memory.service.reindex import MemoryReindexer
from engram_vectors import ExactNumpyStore, FingerprintMismatch

pytestmark = pytest.mark.unit

T0 = datetime(2026, 12, 5, 14, 0, tzinfo=UTC)


def _row(n: int, status: str = "active", tenant: str = "t1") -> dict[str, Any]:
    return {
        "_id": f"{tenant}:m{n:04d}",
        "tenant_id": tenant,
        "agent_id": "a1",
        "memory_id": f"m{n:04d}",
        "type": "fact",
        "status": status,
        "content_sha256": "0" * 64,
        "content": f"memory number {n} about topic{n % 7} and the colour {['red', 'blue'][n % 2]}",
        "created_at": T0,
        "stored_at": T0,
    }


class FakeReindexStore:
    """The rows and the reindex document in dicts; counts each row a page handed out."""

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self.rows = {row["_id"]: dict(row) for row in rows}
        self.active: Space | None = None
        self.job: Reindex | None = None
        self.handed: list[str] = []

    async def load(self) -> tuple[Space | None, Reindex | None]:
        return self.active, self.job

    async def save(self, job: Reindex) -> None:
        self.job = Reindex.of(job.as_doc())

    async def switch(self, job: Reindex) -> None:
        self.active, self.job = job.target, job

    def _live(self, after: str | None) -> list[dict[str, Any]]:
        return [
            dict(row)
            for key, row in sorted(self.rows.items())
            if row["status"] in LIVE and (after is None or key > after)
        ]

    def key(self, row: MemoryRow) -> str:
        return f"{row.tenant_id}:{row.memory_id}"

    async def page(self, after: str | None, limit: int) -> list[MemoryRow]:
        found = self._live(after)[:limit]
        self.handed += [row["_id"] for row in found]
        return [memory_row(row) for row in found]

    async def stored_between(
        self, since: datetime, until: datetime, after: str | None, limit: int
    ) -> list[MemoryRow]:
        found = [row for row in self._live(after) if since <= row["stored_at"] < until]
        return [memory_row(row) for row in found[:limit]]

    async def by_keys(self, keys: Sequence[str]) -> dict[str, MemoryRow]:
        return {key: memory_row(self.rows[key]) for key in keys if key in self.rows}

    async def count_live(self) -> int:
        return len(self._live(None))


async def _space(store: ExactNumpyStore, name: str, embedder: Embedder) -> Embedded:
    vectors = MemoryVectors(store, name)
    await vectors.open(embedder.provenance.dimension, embedder.provenance.fingerprint)
    return Embedded(embedder, vectors)


async def _stored(space: Embedded, rows: Sequence[dict[str, Any]]) -> None:
    if not rows:
        return
    embedded = await space.embedder.embed([row["content"] for row in rows])
    await space.vectors.put_many(
        [
            (memory_row(row), v.tolist(), row["status"])
            for row, v in zip(rows, embedded.vectors, strict=True)
        ],
        space.embedder.provenance.model_dump(),
    )


class Setup:
    """A store of memories embedded with hashing-64, and a reindexer towards hashing-48."""

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self.rows = list(rows)
        self.store = ExactNumpyStore()
        self.records = FakeReindexStore(rows)

    async def build(self, page_size: int = 3) -> Setup:
        self.source = await _space(self.store, "memories", HashingEmbedder(dimension=64))
        await _stored(self.source, [r for r in self.rows if r["status"] in LIVE])
        self.moving = MovingVectors(self.source)
        self.reindexer = self.reindexer_for(self.moving, page_size)
        return self

    def reindexer_for(self, moving: MovingVectors, page_size: int = 3) -> MemoryReindexer:
        async def open_vectors(name: str, embedder: Embedder) -> MemoryVectors:
            space = await _space(self.store, name, embedder)
            assert isinstance(space.vectors, MemoryVectors)
            return space.vectors

        return MemoryReindexer(
            self.records,
            self.records,
            moving,
            active=Space("memories", "hashing", 64),
            embedder_for=lambda kind, dim: HashingEmbedder(dimension=dim or 384),
            open_vectors=open_vectors,
            base_collection="memories",
            page_size=page_size,
            verify_pause=0.0,
        )


def test_a_job_advances_finishes_and_reads_back_the_same() -> None:
    job = Reindex(Space("m", "minilm"), Space("m-x", "bge-small"), "fp", T0, total=10)
    moved = job.advanced("t:m5", 5).advanced("t:m9", 4)
    assert (moved.cursor, moved.done) == ("t:m9", 9)
    done = moved.finished(T0 + timedelta(seconds=3))
    assert done.view(T0 + timedelta(hours=1))["rate"] == 3.0
    assert Reindex.of(done.as_doc()) == done
    assert moved.failed(T0, "boom").state == "failed"


def test_only_one_reindex_runs_at_a_time() -> None:
    job = Reindex(Space("m", "minilm"), Space("m-x", "bge-small"), "fp", T0)
    with pytest.raises(ReindexRunning):
        may_start(job)
    may_start(job.finished(T0))
    may_start(None)
    assert target_collection("memories", "abcdef0123456789") == "memories-abcdef012345"


async def test_writes_during_a_move_land_in_both_spaces_each_in_its_own() -> None:
    setup = await Setup([]).build()
    target = await _space(setup.store, "memories-new", HashingEmbedder(dimension=48))
    setup.moving.begin(target)
    row = _row(1)
    source_vector = (await setup.source.embedder.embed([row["content"]])).vectors[0].tolist()
    provenance = setup.source.embedder.provenance.model_dump()
    await setup.moving.put_many([(memory_row(row), source_vector, "active")], provenance)
    assert await setup.source.vectors.total() == await target.vectors.total() == 1
    await setup.moving.set_status("t1", "m0001", "superseded", superseded_by="m0002")
    found = await target.vectors.points("t1", ["m0001"])
    assert found["m0001"].payload["status"] == "superseded"
    await setup.moving.remove("t1", ["m0001"])
    assert await setup.source.vectors.total() == await target.vectors.total() == 0


async def test_after_a_switch_foreign_writes_are_embedded_here_never_mixed() -> None:
    setup = await Setup([]).build()
    target = await _space(setup.store, "memories-new", HashingEmbedder(dimension=48))
    row = _row(1)
    old_vector = (await setup.source.embedder.embed([row["content"]])).vectors[0].tolist()
    old = setup.source.embedder.provenance.model_dump()
    with pytest.raises(FingerprintMismatch):
        await MovingVectors(target).put_many([(memory_row(row), old_vector, "active")], old)
    setup.moving.begin(target)
    setup.moving.switch()
    await setup.moving.put_many([(memory_row(row), old_vector, "active")], old)
    point = (await target.vectors.points("t1", ["m0001"]))["m0001"]
    assert point.payload["provenance"]["fingerprint"] == target.fingerprint
    assert setup.moving.space()[0] is target.embedder


async def test_a_walk_copies_every_live_row_then_recall_reads_the_new_space() -> None:
    rows = [_row(n) for n in range(10)] + [_row(10, "withdrawn"), _row(11, "superseded")]
    setup = await Setup(rows).build()
    recall = Recall(setup.source.embedder, setup.moving, space=setup.moving.space)
    before = await recall.recall("t1", "a1", "memory number 3 about topic3", 3, min_score=0.0)
    job = await setup.reindexer.start("hashing", 48)
    assert job.total == 11
    await setup.reindexer.walk()
    assert setup.records.active == job.target
    assert setup.records.job is not None and setup.records.job.state == "done"
    assert setup.records.job.done == 11
    embedder, vectors = setup.moving.space()
    assert embedder.provenance.dimension == 48
    assert await vectors.total() == 11
    after = await recall.recall("t1", "a1", "memory number 3 about topic3", 3, min_score=0.0)
    assert after.results[0]["memory_id"] == before.results[0]["memory_id"] == "m0003"
    assert after.results[0]["provenance"]["dimension"] == 48


async def test_a_restarted_walk_resumes_after_its_cursor() -> None:
    setup = await Setup([_row(n) for n in range(9)]).build()
    await setup.reindexer.start("hashing", 48)
    assert setup.moving.target is not None
    page = await setup.records.page(None, 3)
    await setup.reindexer.copy(setup.moving.target, page)
    assert setup.records.job is not None
    await setup.records.save(setup.records.job.advanced(setup.records.key(page[-1]), 3))
    setup.records.handed.clear()
    restarted = MovingVectors(setup.source)
    reindexer = setup.reindexer_for(restarted)
    _, job = await setup.records.load()
    assert job is not None
    await reindexer.resume(job)
    assert restarted.target is not None
    await reindexer.walk()
    assert setup.records.handed == [f"t1:m{n:04d}" for n in range(3, 9)]
    assert setup.records.job is not None and setup.records.job.done == 9
    assert await restarted.space()[1].total() == 9


async def test_a_row_withdrawn_while_its_page_is_embedded_leaves_the_new_space() -> None:
    setup = await Setup([_row(n) for n in range(4)]).build()
    await setup.reindexer.start("hashing", 48)
    target = setup.moving.target
    assert target is not None
    page = await setup.records.page(None, 4)
    setup.records.rows["t1:m0002"]["status"] = "withdrawn"
    await setup.moving.remove("t1", ["m0002"])
    await setup.reindexer.copy(target, page)
    assert await target.vectors.total() == 3


async def test_a_move_whose_counts_differ_fails_and_recall_stays() -> None:
    setup = await Setup([_row(n) for n in range(4)]).build()
    await _stored(setup.source, [_row(99)])
    await setup.reindexer.start("hashing", 48)
    await setup.reindexer._run_job()
    assert setup.records.job is not None and setup.records.job.state == "failed"
    assert "4 points" in str(setup.records.job.error)
    assert setup.moving.target is None
    assert setup.moving.space()[1] is setup.source.vectors
    assert setup.records.active is None
    await setup.reindexer.start("hashing", 40)


async def test_moving_to_the_space_already_in_use_is_refused() -> None:
    setup = await Setup([]).build()
    with pytest.raises(SameSpace):
        await setup.reindexer.start("hashing", 64)


async def test_a_target_embedder_that_cannot_be_built_is_refused_and_nothing_starts() -> None:
    setup = await Setup([_row(1)]).build()

    def missing(kind: str, dimension: int | None) -> Embedder:
        raise FileNotFoundError("model.onnx")

    setup.reindexer.embedder_for = missing
    with pytest.raises(TargetUnavailable, match="bge-small: FileNotFoundError"):
        await setup.reindexer.start("bge-small")
    assert setup.reindexer.job is None and setup.moving.target is None


async def test_a_write_begun_before_the_move_and_stored_after_its_page_is_caught_up() -> None:
    late = _row(0, "pending")
    setup = await Setup([late] + [_row(n) for n in range(1, 5)]).build(page_size=10)
    await setup.reindexer.start("hashing", 48)
    walked = setup.records.page

    async def page_then_store(after: str | None, limit: int) -> list[MemoryRow]:
        found = await walked(after, limit)
        if after is None:
            stored = {**late, "status": "active", "stored_at": datetime.now(UTC)}
            setup.records.rows[late["_id"]] = stored
            await _stored(setup.source, [stored])
        return found

    setup.records.page = page_then_store  # type: ignore[method-assign]
    await setup.reindexer.walk()
    assert setup.records.job is not None and setup.records.job.state == "done"
    found = await setup.moving.space()[1].points("t1", ["m0000"])
    assert found["m0000"].payload["content"] == late["content"]
