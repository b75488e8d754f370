"""The internal routes work from the typed dependencies main installs, with the same statuses."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from engram_enrichment.api import ROUTERS
from engram_enrichment.api.dependencies import EnrichmentDeps
from engram_enrichment.domain.ids import fact_id
from engram_enrichment.domain.schema import Schema
from engram_enrichment.handlers import EnrichmentHandlers
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.resolution import Resolutions
from engram_platform.dependencies import install
from engram_platform.problems import install_problem_handlers
from tests.support.internal import accept_internal_calls, internal_headers
from tests.unit.enrichment.fakes import MemoryStore, StagedEvents
from tests.unit.enrichment.scenario import upserted

pytestmark = pytest.mark.unit

BERLIN = fact_id("carrier:c1", "hq", "Berlin")
MUNICH = fact_id("carrier:c1", "hq", "Munich")


class Enrichment:
    """The routes over an in-memory store, with recall off, and two records that disagree."""

    def __init__(self) -> None:
        self.knowledge = KnowledgeBase(MemoryStore())
        self.handlers = EnrichmentHandlers(self.knowledge, Schema())
        self.outbox = StagedEvents()
        self.app = FastAPI()
        accept_internal_calls(self.app)
        install_problem_handlers(self.app)
        for router in ROUTERS:
            self.app.include_router(router)
        resolutions = Resolutions(self.knowledge, None, self.outbox)
        install(self.app, EnrichmentDeps(self.knowledge, resolutions))

    async def seed(self) -> None:
        await self.handlers.on_record_upserted(upserted("rec_a", 1, {"hq": "Berlin"}))
        await self.handlers.on_record_upserted(upserted("rec_b", 1, {"hq": "Munich"}))

    async def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        transport = httpx.ASGITransport(app=self.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://enrichment") as client:
            return await client.request(
                method, f"/internal/v1{path}", headers=internal_headers("tnt_a"), **kwargs
            )


async def test_a_contradiction_is_resolved_once_and_its_events_staged() -> None:
    e = Enrichment()
    await e.seed()
    listed = (await e.call("GET", "/knowledge/contradictions", params={"status": "open"})).json()
    [contradiction] = listed["contradictions"]
    resolve = f"/knowledge/contradictions/{contradiction['contradiction_id']}/resolve"

    assert (await e.call("POST", resolve, json={"keep": "carrier:c1:hq:0"})).status_code == 422
    kept = await e.call("POST", resolve, json={"value": "Berlin"})
    again = await e.call("POST", resolve, json={"keep": MUNICH})
    unknown = await e.call("POST", "/knowledge/contradictions/ctr_0a/resolve", json={"keep": "x"})

    assert kept.status_code == 200 and kept.json()["contradiction"]["status"] == "resolved"
    assert kept.json()["entity"]["entity_id"] == "carrier:c1"
    assert "contradiction.resolved" in {event.event_type for event in e.outbox.staged}
    assert again.status_code == 409 and again.json()["type"].endswith("/already-resolved")
    assert unknown.status_code == 404


async def test_lineage_names_the_facts_of_records_and_the_records_of_a_fact() -> None:
    e = Enrichment()
    await e.seed()
    facts = (await e.call("POST", "/lineage/facts", json={"records": ["rec_a"]})).json()["facts"]
    sources = await e.call("GET", f"/lineage/facts/{BERLIN}")
    missing = await e.call("GET", "/lineage/facts/carrier:c1:hq:0")

    assert [(f["fact_id"], f["support"]) for f in facts] == [(BERLIN, ["rec_a"])]
    assert sources.status_code == 200 and sources.json()["support"] == ["rec_a"]
    assert missing.status_code == 404


async def test_entities_and_prune_verification_are_served_and_search_needs_recall() -> None:
    e = Enrichment()
    await e.seed()
    listed = (await e.call("GET", "/knowledge/entities")).json()
    verified = await e.call("POST", "/prune/verify", json={"records": ["rec_a"], "facts": []})
    search = await e.call("POST", "/knowledge/search", json={"query": "hq"})

    assert [row["entity_id"] for row in listed["entities"]] == ["carrier:c1"]
    assert (await e.call("GET", "/knowledge/entities/carrier:c1")).json()["version"] == 2
    assert (await e.call("GET", "/knowledge/entities/carrier:c9")).status_code == 404
    assert verified.json()["references"]["records"] == 1
    assert search.status_code == 503 and search.json()["type"].endswith("/recall-disabled")


async def test_known_names_only_the_tenants_facts() -> None:
    e = Enrichment()
    await e.seed()
    asked = {"ids": [BERLIN, fact_id("carrier:c9", "hq", "Oslo"), "junk"]}
    answer = await e.call("POST", "/known", json=asked)
    assert answer.status_code == 200 and answer.json() == {"known": [BERLIN]}


async def test_with_recall_off_a_reindex_is_refused_and_none_has_run() -> None:
    e = Enrichment()
    refused = await e.call("POST", "/knowledge/reindex", json={"embedder": "hashing"})
    assert refused.status_code == 409 and refused.json()["type"].endswith("recall-disabled")
    assert (await e.call("GET", "/knowledge/reindex")).json() == {"state": "none"}
    invalid = await e.call("POST", "/knowledge/reindex", json={"embedder": "word2vec"})
    assert invalid.status_code == 422
