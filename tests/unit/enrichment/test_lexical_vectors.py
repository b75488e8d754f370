"""Fact and section points carry a lexical vector of the very text that was embedded."""

from __future__ import annotations

import pytest

from engram_embedders.hashing import HashingEmbedder
from engram_enrichment.adapters.vectors import KnowledgeVectors, point_id
from engram_enrichment.service.announce import parse_section_item
from engram_vectors import ExactNumpyStore, LexicalMismatch
from engram_vectors.lexical import LEXICAL_ENCODER, V1, V2, document_vector
from tests.unit.enrichment.recall import harness
from tests.unit.enrichment.scenario import upserted

pytestmark = pytest.mark.unit


def _item(purpose: str, item_id: str) -> str:
    """The fact or section id an embedded item stands for."""
    return parse_section_item(item_id)[0] if purpose == "article_section" else item_id


async def test_fact_and_section_points_hold_the_lexical_vector_of_the_embedded_text() -> None:
    h = await harness()
    published = await h.record(upserted("rec_a", 1, {"sku": "SKU-4471-B", "hq": "Berlin"}))
    requests = [e for e in published if e.event_type == "embedding.bulk_requested"]
    texts = {
        point_id("tnt_a", _item(request.payload.purpose, item.item_id)): item.text
        for request in requests
        for item in request.payload.items
    }
    assert "carrier:c1 sku: SKU-4471-B" in texts.values()
    points = await h.vectors.store.get("knowledge", list(texts))
    assert len(points) == len(texts) == 4, "two facts, two sections"
    for point in points:
        expected = document_vector(texts[point.id])
        assert point.sparse is not None and point.sparse.indices == expected.indices
        assert point.sparse.values == pytest.approx(expected.values, rel=1e-6), "float32 stored"
        assert point.payload["text"] == texts[point.id]
    info = await h.vectors.store.collection_info("knowledge")
    assert info.lexical == LEXICAL_ENCODER


async def test_without_lexical_vectors_points_carry_ids_only() -> None:
    h = await harness(KnowledgeVectors(ExactNumpyStore(), "knowledge", lexical=False))
    published = await h.record(upserted("rec_a", 1, {"sku": "SKU-4471-B"}))
    ids = [
        point_id("tnt_a", _item(e.payload.purpose, item.item_id))
        for e in published
        if e.event_type == "embedding.bulk_requested"
        for item in e.payload.items
    ]
    points = await h.vectors.store.get("knowledge", ids)
    assert len(points) == 2 and all(p.sparse is None and "text" not in p.payload for p in points)
    assert (await h.vectors.store.collection_info("knowledge")).lexical is None


@pytest.mark.parametrize(("built_with", "opened_with"), [(False, True), (True, False)])
async def test_a_collection_of_another_lexical_encoder_is_refused_at_open(
    built_with: bool, opened_with: bool
) -> None:
    store = ExactNumpyStore()
    await KnowledgeVectors(store, "knowledge", lexical=built_with).open(8, "fp")
    with pytest.raises(LexicalMismatch) as refused:
        await KnowledgeVectors(store, "knowledge", lexical=opened_with).open(8, "fp")
    assert "'knowledge'" in str(refused.value)
    assert (refused.value.stored is not None) == built_with
    assert (refused.value.asked is not None) == opened_with


async def test_an_existing_collection_of_the_same_encoder_opens_with_its_fingerprint() -> None:
    store = ExactNumpyStore()
    await KnowledgeVectors(store, "knowledge").open(8, "fp-stored")
    assert await KnowledgeVectors(store, "knowledge").open(8, "fp-new") == "fp-stored"


async def test_a_collection_built_with_lexical_v1_is_adopted_for_writes_and_queries() -> None:
    """Knowledge embedded before v2 is still found: points and queries use the stored v1."""
    store = ExactNumpyStore()
    p = HashingEmbedder(dimension=64).provenance
    await store.ensure_collection("knowledge", p.dimension, p.fingerprint, lexical=V1.id)
    h = await harness(KnowledgeVectors(store, "knowledge"))
    assert h.vectors.lexical == V1.id
    await h.record(upserted("rec_a", 1, {"sku": "SKU-4471-B", "hq": "Berlin"}))
    found = await h.search.search("tnt_a", "shipping SKU-4471-B", 5, mode="lexical")
    [fact] = [r for r in found.results if r["kind"] == "fact" and r["value"] == "SKU-4471-B"]
    [point] = await store.get("knowledge", [point_id("tnt_a", fact["fact_id"])])
    v1, v2 = (document_vector(point.payload["text"], e.id) for e in (V1, V2))
    assert point.sparse is not None and point.sparse.indices == v1.indices
    assert point.sparse.values == pytest.approx(v1.values, rel=1e-6), "v1's length norm, not v2's"
    assert v1.values != pytest.approx(v2.values, rel=1e-3)
    assert (await store.collection_info("knowledge")).lexical == V1.id
