"""Knowledge search: facts embedded via events, floored, joined to current status and support."""

from typing import Any

import pytest

from engram_embedders.hashing import HashingEmbedder
from engram_enrichment.adapters.vectors import KnowledgeVectors
from engram_enrichment.domain.schema import Schema
from engram_enrichment.handlers import EnrichmentHandlers
from engram_enrichment.knowledge import KnowledgeBase
from engram_enrichment.search import EmbedderMismatch, KnowledgeSearch
from engram_events import Envelope, new_event
from engram_events.catalog import EMBEDDING_COMPUTED
from engram_events.payloads.embeddings import EmbeddedItem, EmbeddingComputed, VectorProvenance
from engram_vectors import ExactNumpyStore
from engram_vectors.floor import apply_floor, default_floor
from tests.unit.enrichment.fakes import MemoryStore
from tests.unit.enrichment.scenario import upserted

pytestmark = pytest.mark.unit


class Harness:
    """Enrichment with recall on, and the embedding service played by the same embedder."""

    def __init__(self) -> None:
        self.embedder = HashingEmbedder(dimension=64)
        self.knowledge = KnowledgeBase(MemoryStore())
        self.vectors = KnowledgeVectors(ExactNumpyStore(), "knowledge")
        self.handlers = EnrichmentHandlers(self.knowledge, Schema(), self.vectors)
        self.search = KnowledgeSearch(self.embedder, self.vectors, self.knowledge)

    async def open(self) -> None:
        p = self.embedder.provenance
        await self.vectors.open(p.dimension, p.fingerprint)

    async def record(self, event: Envelope[Any]) -> list[Envelope[Any]]:
        published = list(await self.handlers.on_record_upserted(event))
        for request in [e for e in published if e.event_type == "embedding.requested"]:
            await self.handlers.on_embedding_computed(await self._computed(request))
        return published

    async def _computed(self, request: Envelope[Any]) -> Envelope[Any]:
        items = request.payload.items
        embedded = await self.embedder.embed([i.text for i in items])
        p = embedded.provenance
        payload = EmbeddingComputed(
            request_id=request.payload.request_id,
            requester=request.payload.requester,
            purpose="fact",
            items=[
                EmbeddedItem(item_id=i.item_id, vector=[float(x) for x in v])
                for i, v in zip(items, embedded.vectors, strict=True)
            ],
            provenance=VectorProvenance(
                provider=p.provider,
                model_id=p.model_id,
                weights_sha256=p.weights_sha256,
                dimension=p.dimension,
                normalized=p.normalized,
                precision=p.precision,
                fingerprint=p.fingerprint,
            ),
        )
        return new_event(EMBEDDING_COMPUTED, payload, tenant_id=request.tenant_id)


async def harness() -> Harness:
    h = Harness()
    await h.open()
    return h


async def test_new_facts_are_embedded_and_found_with_status_and_support() -> None:
    h = await harness()
    published = await h.record(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12}))
    (request,) = [e for e in published if e.event_type == "embedding.requested"]
    assert request.payload.requester == "enrichment" and len(request.payload.items) == 2
    found = await h.search.search("tnt_a", "carrier:c1 hq: Berlin", 5)
    top = found.results[0]
    assert top["attribute"] == "hq" and top["value"] == "Berlin" and top["status"] == "active"
    assert [s["record_id"] for s in top["support"]] == ["rec_a"]


async def test_the_floor_drops_and_counts_below_floor_hits() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12, "name": "Acme"}))
    raw = await h.search.search("tnt_a", "carrier:c1 hq: Berlin", 5, min_score=-1.0)
    assert len(raw.results) == 3 and raw.dropped_below_floor == 0
    scores = sorted(r["score"] for r in raw.results)
    floor = (scores[-1] + scores[-2]) / 2
    floored = await h.search.search("tnt_a", "carrier:c1 hq: Berlin", 5, min_score=floor)
    assert [r["score"] >= floor for r in floored.results] == [True]
    assert floored.dropped_below_floor == 2 and floored.floor == floor


async def test_contested_facts_carry_their_flag_and_withdrawn_ones_vanish() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin"}))
    await h.record(upserted("rec_b", 1, {"hq": "Munich"}, minute=1))
    found = await h.search.search("tnt_a", "hq", 5, min_score=-1.0)
    assert {r["value"]: r["contested"] for r in found.results} == {"Berlin": True, "Munich": True}
    await h.record(upserted("rec_b", 2, {"hq": "Berlin"}, minute=2))
    found = await h.search.search("tnt_a", "hq", 5, min_score=-1.0)
    assert [(r["value"], r["contested"]) for r in found.results] == [("Berlin", False)]


async def test_other_tenants_facts_are_never_returned() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin"}, tenant="tnt_b"))
    assert (await h.search.search("tnt_a", "hq Berlin", 5, min_score=-1.0)).results == []


async def test_a_query_embedder_of_another_space_is_refused() -> None:
    h = await harness()
    other = KnowledgeSearch(HashingEmbedder(dimension=32), h.vectors, h.knowledge)
    with pytest.raises(EmbedderMismatch):
        await other.search("tnt_a", "hq", 5)


def test_floor_policy() -> None:
    assert default_floor("engram-hashing-v1-64") == 0.05
    kept = apply_floor([("a", 0.9), ("b", 0.2)], 0.5)
    assert kept.kept == [("a", 0.9)] and kept.dropped == 1
