"""Knowledge search: facts embedded via events, floored, joined to current status and support."""

from datetime import UTC, datetime

import pytest

from engram_embedders.hashing import HashingEmbedder
from engram_enrichment.domain.model import Entity
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.timeline import in_time
from engram_enrichment.service.search import EmbedderMismatch, KnowledgeSearch
from engram_events import new_event
from engram_events.catalog import RECORD_UPSERTED
from engram_vectors.floor import apply_floor, default_floor
from tests.unit.enrichment.recall import facts, harness
from tests.unit.enrichment.scenario import at, upserted

pytestmark = pytest.mark.unit


async def test_new_facts_are_embedded_and_found_with_status_and_support() -> None:
    h = await harness()
    published = await h.record(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12}))
    requests = [e for e in published if e.event_type == "embedding.bulk_requested"]
    (request,) = [e for e in requests if e.payload.purpose == "fact"]
    assert request.payload.requester == "enrichment" and len(request.payload.items) == 2
    found = await h.search.search("tnt_a", "carrier:c1 hq: Berlin", 5)
    top = facts(found.results)[0]
    assert top["attribute"] == "hq" and top["value"] == "Berlin" and top["status"] == "active"
    assert [(s["record_id"], s["source"]) for s in top["support"]] == [("rec_a", "document")]


async def test_the_floor_drops_and_counts_below_floor_hits() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12, "name": "Acme"}))
    raw = await h.search.search("tnt_a", "hq: Berlin", 10, min_score=-1.0)
    assert len(raw.results) == 6 and raw.dropped_below_floor == 0, "three facts, three sections"
    scores = sorted(r["score"] for r in raw.results)
    floor = (scores[-1] + scores[-2]) / 2
    floored = await h.search.search("tnt_a", "hq: Berlin", 10, min_score=floor)
    assert [r["score"] >= floor for r in floored.results] == [True]
    assert floored.results[0]["kind"] == "fact" and floored.results[0]["value"] == "Berlin"
    assert floored.dropped_below_floor == 5 and floored.floor == floor
    named = await h.search.search("tnt_a", "carrier:c1 hq: Berlin", 10, min_score=0.99)
    assert len(named.results) == 6 and named.dropped_below_floor == 0, (
        "every hit names carrier:c1, an identifier of the query: the floor drops none"
    )


async def test_contested_facts_carry_their_flag_and_withdrawn_ones_vanish() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin"}))
    await h.record(upserted("rec_b", 1, {"hq": "Munich"}, minute=1))
    found = facts((await h.search.search("tnt_a", "hq", 5, min_score=-1.0)).results)
    assert {r["value"]: r["contested"] for r in found} == {"Berlin": True, "Munich": True}
    await h.record(upserted("rec_b", 2, {"hq": "Berlin"}, minute=2))
    found = facts((await h.search.search("tnt_a", "hq", 5, min_score=-1.0)).results)
    assert [(r["value"], r["contested"]) for r in found] == [("Berlin", False)]


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


async def test_a_search_in_time_finds_the_value_true_or_known_then() -> None:
    h = await harness()
    jan, mar = (datetime(2026, m, 1, tzinfo=UTC) for m in (1, 3))
    for record_id, value, start, minute in (("rec_j", "1.20", jan, 0), ("rec_m", "1.35", mar, 10)):
        event = upserted(record_id, 1, {"rate": value}, minute=minute)
        payload = event.payload.model_copy(update={"valid_from": start})
        await h.record(new_event(RECORD_UPSERTED, payload, tenant_id="tnt_a"))

    async def rates(**when: datetime) -> list[tuple[str, str]]:
        def seen(entity: Entity) -> Entity:
            return in_time(entity, Schema(), when.get("valid_at"), when.get("as_of"))

        found = await h.search.search("tnt_a", "rate", 5, min_score=-1.0, view=seen)
        return [(r["value"], r["status"]) for r in facts(found.results)]

    assert await rates() == [("1.35", "active")]
    assert await rates(valid_at=datetime(2026, 2, 1, tzinfo=UTC)) == [("1.20", "active")]
    assert await rates(as_of=at(5)) == [("1.20", "active")]
