"""Knowledge search modes: an exact identifier or value is found first where dense vectors miss
it, the floor keeps exact matches, and lexical search can be turned off."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi import FastAPI

from engram_enrichment.adapters.vectors import KnowledgeVectors, point_id
from engram_enrichment.api import search as search_api
from engram_enrichment.api.dependencies import EnrichmentDeps
from engram_enrichment.service.resolution import Resolutions
from engram_enrichment.service.search import LexicalOff, candidate_pool
from engram_platform.dependencies import install
from engram_platform.problems import install_problem_handlers
from engram_vectors import ExactNumpyStore
from tests.support.internal import accept_internal_calls, internal_headers
from tests.unit.enrichment.fakes import StagedEvents
from tests.unit.enrichment.recall import Harness, facts, harness
from tests.unit.enrichment.scenario import upserted

pytestmark = pytest.mark.unit

CARRIERS = 200
EXACT = 185
"""SKU-4585: the hashing embedder ranks carrier:c187's SKU-4587 above it (checked below)."""


def sku(n: int) -> str:
    return f"SKU-{4400 + n}"


async def carriers(h: Harness) -> None:
    """200 carriers with facts alike but for their ids and SKUs."""
    for n in range(1, CARRIERS + 1):
        record = upserted(f"rec_{n}", 1, {"sku": sku(n), "hq": "Berlin"}, entity_id=f"carrier:c{n}")
        await h.record(record)


@pytest.fixture(scope="module")
async def carried() -> Harness:
    """One harness holding the 200 carriers, shared by the tests that only search it."""
    h = await harness()
    await carriers(h)
    return h


async def test_an_exact_value_comes_first_in_hybrid_and_lexical_where_dense_ranks_a_near_miss_first(
    carried: Harness,
) -> None:
    h = carried
    dense = await h.search.search("tnt_a", sku(EXACT), 5, min_score=-1.0, mode="dense")
    assert dense.mode == "dense"
    assert facts(dense.results)[0]["value"] == sku(187), "dense vectors miss the exact SKU"
    for mode in ("hybrid", "lexical"):
        found = await h.search.search("tnt_a", sku(EXACT), 5, min_score=-1.0, mode=mode)
        top = found.results[0]
        assert found.mode == mode
        assert (top["kind"], top["entity_id"], top["value"]) == (
            "fact",
            f"carrier:c{EXACT}",
            sku(EXACT),
        ), mode
        assert found.results[1]["kind"] == "article_section"
        assert found.results[1]["section_id"] == f"carrier:c{EXACT}@sku"
        assert top["score"] == top["scores"]["dense"], "score stays the cosine"
        assert top["scores"]["lexical"] > 0 and top["scores"]["fused"] >= max(
            r["scores"]["fused"] for r in found.results
        )


async def test_an_entity_id_finds_that_entitys_facts_and_sections_first(carried: Harness) -> None:
    h = carried
    for mode in ("hybrid", "lexical"):
        found = await h.search.search("tnt_a", "carrier:c18", 4, min_score=-1.0, mode=mode)
        assert {r["entity_id"] for r in found.results} == {"carrier:c18"}, mode
        assert len(found.results) == 4, "two facts and two sections"


async def test_lexical_mode_returns_only_hits_sharing_a_term(carried: Harness) -> None:
    h = carried
    found = await h.search.search("tnt_a", "SKU-9999999", 20, min_score=-1.0, mode="lexical")
    assert found.results and all(r["scores"]["lexical"] > 0 for r in found.results)
    assert all(r["attribute"] == "sku" for r in found.results), "hq hits share no term"


async def test_the_floor_keeps_the_exact_identifier_match_and_drops_the_rest(
    carried: Harness,
) -> None:
    h = carried
    raw = await h.search.search("tnt_a", sku(EXACT), 10, min_score=-1.0)
    exact = raw.results[0]
    floor = max(r["scores"]["dense"] for r in raw.results) + 0.01
    floored = await h.search.search("tnt_a", sku(EXACT), 10, min_score=floor)
    assert [(r["kind"], r["entity_id"]) for r in floored.results] == [
        ("fact", f"carrier:c{EXACT}"),
        ("article_section", f"carrier:c{EXACT}"),
    ], "both name the SKU; every near miss is below the floor"
    assert floored.results[0]["fact_id"] == exact["fact_id"]
    assert all(r["score"] < floor for r in floored.results)
    assert floored.dropped_below_floor == 8 and floored.floor == floor


async def test_other_tenants_words_never_reach_the_results() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"sku": "SKU-4585"}, tenant="tnt_b"))
    for mode in ("hybrid", "dense", "lexical"):
        found = await h.search.search("tnt_a", "SKU-4585", 5, min_score=-1.0, mode=mode)
        assert found.results == [], mode


async def test_without_lexical_vectors_lexical_is_refused_and_hybrid_is_dense() -> None:
    h = await harness(KnowledgeVectors(ExactNumpyStore(), "knowledge", lexical=False))
    await h.record(upserted("rec_a", 1, {"sku": "SKU-4585", "hq": "Berlin"}))
    with pytest.raises(LexicalOff, match="ENGRAM_ENRICHMENT_LEXICAL"):
        await h.search.search("tnt_a", "SKU-4585", 5, mode="lexical")
    found = await h.search.search("tnt_a", "SKU-4585", 5, min_score=-1.0)
    assert found.mode == "dense" and found.results
    assert all(r["scores"]["lexical"] is None for r in found.results)
    assert all(r["scores"]["fused"] == r["scores"]["dense"] for r in found.results)


async def test_a_candidate_no_longer_live_gives_its_place_to_the_next() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"sku": "SKU-4585"}))
    entity = await h.knowledge.load("tnt_a", "carrier:c1")
    assert entity is not None
    (fact_id,) = entity.facts
    (stale,) = await h.vectors.store.get("knowledge", [point_id("tnt_a", fact_id)])
    await h.record(upserted("rec_a", 2, {"sku": "SKU-4586"}, minute=1))
    await h.vectors.store.upsert("knowledge", [stale])
    ranked = await h.search.search("tnt_a", "SKU-4585", 3, min_score=-1.0)
    assert [r.get("fact_id") for r in ranked.results].count(fact_id) == 0
    top = await h.search.search("tnt_a", "SKU-4585", 1, min_score=-1.0)
    assert len(top.results) == 1, "the withdrawn fact's stale point ranks first and is skipped"


def test_the_candidate_pool_is_at_least_top_k() -> None:
    assert [candidate_pool(k) for k in (1, 5, 50, 100, 400, 1000)] == [
        50,
        50,
        200,
        400,
        400,
        1000,
    ]


async def test_queries_and_fact_values_never_reach_the_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    h = await harness()
    await h.record(upserted("rec_a", 1, {"sku": "SKU-4585", "hq": "Valparaiso"}))
    for mode in ("hybrid", "dense", "lexical"):
        await h.search.search("tnt_a", "SKU-4585 Valparaiso harbour", 5, mode=mode)
    searches = [r for r in caplog.records if r.getMessage() == "knowledge search"]
    assert len(searches) == 3 and {getattr(r, "mode", None) for r in searches} == {
        "hybrid",
        "dense",
        "lexical",
    }
    standard = set(vars(logging.makeLogRecord({})))
    logged = " ".join(
        f"{r.getMessage()} {[v for k, v in vars(r).items() if k not in standard]}"
        for r in caplog.records
    ).lower()
    assert "4585" not in logged and "valparaiso" not in logged and "harbour" not in logged


def _app(h: Harness) -> FastAPI:
    app = FastAPI()
    accept_internal_calls(app)
    install_problem_handlers(app)
    app.include_router(search_api.router)
    resolutions = Resolutions(h.knowledge, h.handlers.sections, StagedEvents())
    install(app, EnrichmentDeps(h.knowledge, resolutions, h.handlers.sections, h.search, 100))
    return app


async def _post(h: Harness, body: dict[str, object]) -> httpx.Response:
    transport = httpx.ASGITransport(app=_app(h))
    async with httpx.AsyncClient(transport=transport, base_url="http://enrichment") as client:
        return await client.post(
            "/internal/v1/knowledge/search", json=body, headers=internal_headers("tnt_a")
        )


async def test_the_route_takes_a_mode_and_answers_with_it() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"sku": "SKU-4585"}))
    answer = await _post(h, {"query": "SKU-4585", "mode": "lexical"})
    assert answer.status_code == 200 and answer.json()["mode"] == "lexical"
    assert set(answer.json()["results"][0]["scores"]) == {"dense", "lexical", "fused"}
    assert (await _post(h, {"query": "SKU-4585"})).json()["mode"] == "hybrid"
    assert (await _post(h, {"query": "x", "mode": "sparse"})).status_code == 422
    assert (await _post(h, {"query": "x", "alpha": 0.5})).status_code == 422


async def test_the_route_refuses_lexical_mode_when_it_is_off() -> None:
    h = await harness(KnowledgeVectors(ExactNumpyStore(), "knowledge", lexical=False))
    refused = await _post(h, {"query": "SKU-4585", "mode": "lexical"})
    assert refused.status_code == 409
    assert refused.json()["type"].endswith("/lexical-disabled")
    assert (await _post(h, {"query": "SKU-4585"})).json()["mode"] == "dense"
