"""The knowledge reindex: what a page changed under it, writes landing in both spaces, the walk
over entities then passages, verification per kind, resume and the switch of search."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from engram_embedders import Embedder, HashingEmbedder
from engram_embedders.moving import Embedded, same_vector
from engram_embedders.reindex import Reindex, Space
from engram_enrichment.adapters.vectors import KnowledgeVectors
from engram_enrichment.api import reindex as reindex_api
from engram_enrichment.api.dependencies import EnrichmentDeps
from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.domain.reindex import Item, by_group, changed_under
from engram_enrichment.domain.schema import Schema
from engram_enrichment.handlers import EnrichmentHandlers
from engram_enrichment.ports import MovableKnowledge
from engram_enrichment.service.moving import MovingKnowledge
from engram_enrichment.service.reindex import KnowledgeReindexer
from engram_enrichment.service.resolution import Resolutions
from engram_enrichment.service.search import KnowledgeSearch
from engram_platform.dependencies import install
from engram_platform.problems import install_problem_handlers
from engram_vectors import ExactNumpyStore
from tests.support.internal import accept_internal_calls, internal_headers
from tests.unit.enrichment.fakes import StagedEvents
from tests.unit.enrichment.recall import Harness, harness
from tests.unit.enrichment.scenario import upserted
from tests.unit.enrichment.test_passages import passage

pytestmark = pytest.mark.unit


def _item(item_id: str, text: str, tenant: str = "t1") -> Item:
    return Item(f"{tenant}:e1", tenant, "fact", item_id, ("e1", item_id, text, ()))


def test_a_page_read_again_names_what_went_and_what_changed() -> None:
    page = [_item("f1", "a"), _item("f2", "b"), _item("f3", "c")]
    now = {("t1", "f1"): _item("f1", "a"), ("t1", "f3"): _item("f3", "c2")}
    gone, rewritten = changed_under(page, now)
    assert [i.item_id for i in gone] == ["f2"]
    assert [(i.item_id, i.text) for i in rewritten] == [("f3", "c2")]
    groups = by_group([_item("f1", "a"), _item("f2", "b", "t2"), _item("f3", "c")])
    assert {key: len(items) for key, items in groups.items()} == {
        ("t1", "fact"): 2,
        ("t2", "fact"): 1,
    }


def test_a_job_walks_phases_and_tells_its_eta() -> None:
    start = datetime(2026, 12, 5, 14, 0)
    job = Reindex(Space("k", "hashing", 64), Space("k-x", "hashing", 48), "fp", start, total=10)
    moved = job.entered("entities").advanced("t:e9", 4).entered("passages")
    assert (moved.phase, moved.cursor, moved.done) == ("passages", None, 4)
    assert Reindex.of(moved.as_doc()) == moved
    later = datetime(2026, 12, 5, 14, 0, 2)
    assert moved.view(later)["eta_seconds"] == 3.0, "6 left at 2 a second"
    assert moved.finished(later).view(later)["eta_seconds"] is None


class FakeWalk:
    """The harness's entity documents and passage rows, walked as Mongo would: by `_id`."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.handed: list[str] = []

    def _entities(self) -> dict[str, dict[str, Any]]:
        return dict(sorted(self.h.knowledge.store.entities.items()))  # type: ignore[attr-defined]

    def _passages(self) -> dict[str, PassageRow]:
        return dict(sorted(self.h.passages.rows.items()))

    async def entities(self, after: str | None, limit: int) -> list[dict[str, Any]]:
        found = [doc for k, doc in self._entities().items() if after is None or k > after][:limit]
        self.handed += [f"{d['tenant_id']}:{d['entity_id']}" for d in found]
        return found

    async def entities_by_keys(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {k: doc for k, doc in self._entities().items() if k in keys}

    async def entities_updated_between(
        self, since: datetime, until: datetime, after: str | None, limit: int
    ) -> list[dict[str, Any]]:
        return []

    async def passages(self, after: str | None, limit: int) -> list[PassageRow]:
        return [row for k, row in self._passages().items() if after is None or k > after][:limit]

    async def passages_by_keys(self, keys: Sequence[str]) -> dict[str, PassageRow]:
        return {k: row for k, row in self._passages().items() if k in keys}


class FakeRecords:
    def __init__(self) -> None:
        self.active: Space | None = None
        self.job: Reindex | None = None

    async def load(self) -> tuple[Space | None, Reindex | None]:
        return self.active, self.job

    async def save(self, job: Reindex) -> None:
        self.job = Reindex.of(job.as_doc())

    async def switch(self, job: Reindex) -> None:
        self.active, self.job = job.target, job


class Setup:
    """Knowledge embedded with hashing-64 (facts, sections, a passage), moving to hashing-48."""

    async def build(self, page_size: int = 1) -> Setup:
        self.h = await harness()
        await self.h.record(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12}))
        await self.h.record(upserted("rec_p", 1, {"berth": "North"}, entity_id="port:p1"))
        await self.h.passage(passage("psg_1", "Returns are accepted within 30 days.", ["Returns"]))
        self.records = FakeRecords()
        self.walk = FakeWalk(self.h)
        self.moving = MovingKnowledge(Embedded(self.h.embedder, self.h.vectors))
        self.h.handlers = EnrichmentHandlers(
            self.h.knowledge, Schema(), self.moving, self.h.passages
        )
        self.search = KnowledgeSearch(
            self.h.embedder,
            self.moving,
            self.h.knowledge,
            passages=self.h.passages,
            space=self.moving.space,
        )
        self.reindexer = self.reindexer_for(self.moving, page_size)
        return self

    def reindexer_for(self, moving: MovingKnowledge, page_size: int = 1) -> KnowledgeReindexer:
        store = self.h.vectors.store

        async def open_vectors(name: str, embedder: Embedder) -> MovableKnowledge:
            vectors = KnowledgeVectors(store, name)
            await vectors.open(embedder.provenance.dimension, embedder.provenance.fingerprint)
            return vectors

        return KnowledgeReindexer(
            self.records,
            self.walk,
            moving,
            active=Space("knowledge", "hashing", 64),
            embedder_for=lambda kind, dim: HashingEmbedder(dimension=dim or 384),
            open_vectors=open_vectors,
            base_collection="knowledge",
            page_size=page_size,
            verify_pause=0.0,
        )

    async def found(self, query: str) -> list[dict[str, Any]]:
        return (await self.search.search("tnt_a", query, 20, min_score=-1.0)).results


async def test_a_walk_copies_every_kind_then_search_reads_the_new_space() -> None:
    setup = await Setup().build()
    before = await setup.found("hq: Berlin")
    source = await setup.h.vectors.counts()
    assert source["fact"] == 3 and source["article_section"] == 3 and source["passage"] == 1
    job = await setup.reindexer.start("hashing", 48)
    assert job.total == 7 and job.target.collection.startswith("knowledge-")
    await setup.reindexer.walk()
    assert setup.records.job is not None and setup.records.job.state == "done"
    assert setup.records.active == job.target
    target = setup.moving.active.vectors
    assert target.collection == job.target.collection
    assert await target.counts() == source
    after = await setup.found("hq: Berlin")
    assert {r["provenance"]["dimension"] for r in after} == {48}
    assert {(r["kind"], r.get("entity_id")) for r in after} == {
        (r["kind"], r.get("entity_id")) for r in before
    }
    assert setup.reindexer.progress() is not None
    assert setup.reindexer.progress()["done"] == 7  # type: ignore[index]


async def test_writes_during_a_move_land_in_both_spaces_each_in_its_own() -> None:
    setup = await Setup().build()
    await setup.reindexer.start("hashing", 48)
    await setup.h.record(upserted("rec_b", 1, {"hq": "Munich"}, entity_id="carrier:c2"))
    assert setup.moving.target is not None
    old, new = await setup.h.vectors.counts(), await setup.moving.target.vectors.counts()
    assert old["fact"] == 4 and new["fact"] == 1
    [fact_id] = [
        f
        for f in (await setup.h.knowledge.load("tnt_a", "carrier:c2")).facts  # type: ignore[union-attr]
    ]
    target = setup.moving.target
    point = (await target.vectors.points("tnt_a", [fact_id]))[fact_id]
    assert await same_vector(target.embedder, "carrier:c2 hq: Munich", point.vector)
    await setup.reindexer.walk()
    after = await setup.found("hq: Munich")
    assert any(r.get("entity_id") == "carrier:c2" for r in after)
    assert {r["provenance"]["dimension"] for r in after} == {48}


async def test_after_a_switch_vectors_of_the_old_space_are_embedded_here() -> None:
    setup = await Setup().build()
    await setup.reindexer.start("hashing", 48)
    await setup.reindexer.walk()
    published = await setup.h.record(upserted("rec_c", 1, {"hq": "Hamburg"}, entity_id="c:3"))
    assert published, "the harness played the embedding service with hashing-64"
    found = await setup.found("c:3 hq: Hamburg")
    assert any(r.get("entity_id") == "c:3" for r in found)
    assert {r["provenance"]["dimension"] for r in found} == {48}


async def test_a_restarted_walk_resumes_after_its_cursor() -> None:
    setup = await Setup().build(page_size=1)
    await setup.reindexer.start("hashing", 48)
    assert setup.records.job is not None
    first = await setup.reindexer.next_page(setup.records.job)
    assert first is not None
    page, advanced = first
    assert setup.moving.target is not None
    await setup.reindexer.copy(setup.moving.target, page)
    await setup.records.save(advanced)
    setup.walk.handed.clear()

    moving = MovingKnowledge(Embedded(setup.h.embedder, setup.h.vectors))
    restarted = setup.reindexer_for(moving)
    _, job = await setup.records.load()
    assert job is not None
    await restarted.resume(job)
    await restarted.walk()
    assert setup.walk.handed[0] > advanced.cursor  # type: ignore[operator]
    assert setup.records.job is not None and setup.records.job.state == "done"
    assert await moving.active.vectors.counts() == await setup.h.vectors.counts()


async def test_a_move_whose_counts_differ_fails_and_search_stays() -> None:
    setup = await Setup().build()
    job = await setup.reindexer.start("hashing", 48)
    stray = KnowledgeVectors(setup.h.vectors.store, job.target.collection)
    assert setup.moving.target is not None
    await stray.put_facts(
        "tnt_a",
        [("x:1", "x:1:a:b", "x:1 a: b", [1.0] + [0.0] * 47)],
        setup.moving.target.fingerprint,
    )
    await setup.reindexer._run_job()
    assert setup.records.job is not None and setup.records.job.state == "failed"
    assert "points" in (setup.records.job.error or "")
    assert setup.moving.target is None and setup.moving.active.vectors is setup.h.vectors
    assert {r["provenance"]["dimension"] for r in await setup.found("hq: Berlin")} == {64}


async def test_a_store_never_reindexed_opens_its_configured_space() -> None:
    store = ExactNumpyStore()
    vectors = KnowledgeVectors(store, "knowledge")
    moving = MovingKnowledge(Embedded(HashingEmbedder(dimension=64), vectors))
    embedder, active = moving.space()
    assert active is vectors and embedder.provenance.dimension == 64


async def test_the_route_starts_a_move_and_refuses_a_second_or_the_same_space() -> None:
    setup = await Setup().build()
    app = FastAPI()
    accept_internal_calls(app)
    install_problem_handlers(app)
    app.include_router(reindex_api.router)
    resolutions = Resolutions(setup.h.knowledge, None, StagedEvents())
    install(app, EnrichmentDeps(setup.h.knowledge, resolutions, reindex=setup.reindexer))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://enrichment") as client:

        async def call(method: str, **kwargs: Any) -> httpx.Response:
            path = "/internal/v1/knowledge/reindex"
            return await client.request(method, path, headers=internal_headers("t1"), **kwargs)

        same = await call("POST", json={"embedder": "hashing", "hashing_dimension": 64})
        assert same.status_code == 409 and same.json()["type"].endswith("reindex-refused")
        started = await call("POST", json={"embedder": "hashing", "hashing_dimension": 48})
        assert started.status_code == 200 and started.json()["total"] == 7
        again = await call("POST", json={"embedder": "hashing", "hashing_dimension": 32})
        assert again.status_code == 409
        running = (await call("GET")).json()
        assert running["state"] == "running" and running["phase"] is None
