"""The handlers announce only what was written and read back; replays announce nothing."""

from typing import Any

import pytest

from engram_enrichment.domain.ids import fact_id
from engram_enrichment.domain.schema import Schema
from engram_enrichment.handlers import EnrichmentHandlers
from engram_enrichment.service.knowledge import KnowledgeBase, NotApplied
from engram_enrichment.service.verify import facts_still_standing, references
from tests.unit.enrichment.fakes import MemoryStore, OneFactLostStore, SilentlyIgnoringStore
from tests.unit.enrichment.scenario import tombstoned, upserted

pytestmark = pytest.mark.unit


def handlers(store: MemoryStore) -> EnrichmentHandlers:
    return EnrichmentHandlers(KnowledgeBase(store), Schema())


def kinds(events: list[Any]) -> list[str]:
    return sorted(e.event_type for e in events)


async def test_an_upsert_announces_each_new_fact_once() -> None:
    h = handlers(MemoryStore())
    events = await h.on_record_upserted(upserted("rec_a", 1, {"name": "Acme", "fleet": 3}))
    assert kinds(events) == ["fact.changed", "fact.changed"]
    assert {e.payload.change for e in events} == {"created"}
    assert all(e.payload.support[0].document_id == "doc_rec_a" for e in events)


async def test_replaying_the_same_record_writes_and_announces_nothing() -> None:
    store = MemoryStore()
    h = handlers(store)
    await h.on_record_upserted(upserted("rec_a", 1, {"name": "Acme"}))
    saves = store.saves
    assert await h.on_record_upserted(upserted("rec_a", 1, {"name": "Acme"})) == []
    assert store.saves == saves


async def test_rerunning_the_same_event_after_a_crash_stages_the_same_event_ids() -> None:
    h = handlers(MemoryStore())
    event = upserted("rec_a", 1, {"name": "Acme"})
    first = await h.on_record_upserted(event)
    again = await h.on_record_upserted(event)
    assert [e.event_id for e in first] == [e.event_id for e in again] != []


async def test_a_stale_revision_changes_nothing() -> None:
    h = handlers(MemoryStore())
    await h.on_record_upserted(upserted("rec_a", 2, {"name": "New"}))
    assert await h.on_record_upserted(upserted("rec_a", 1, {"name": "Old"})) == []


async def test_a_write_that_silently_does_nothing_reports_nothing_applied() -> None:
    store = SilentlyIgnoringStore()
    h = handlers(store)
    with pytest.raises(NotApplied) as failure:
        await h.on_record_upserted(upserted("rec_a", 1, {"name": "Acme", "fleet": 3}))
    assert store.saves == 1
    assert fact_id("carrier:c1", "name", "Acme") in failure.value.failed


async def test_a_partial_write_names_the_update_that_failed() -> None:
    h = handlers(OneFactLostStore())
    with pytest.raises(NotApplied) as failure:
        await h.on_record_upserted(upserted("rec_a", 1, {"name": "Acme", "fleet": 3}))
    assert failure.value.failed == [fact_id("carrier:c1", "name", "Acme")]


async def test_disagreement_announces_one_contradiction_with_both_claims() -> None:
    h = handlers(MemoryStore())
    await h.on_record_upserted(upserted("rec_a", 1, {"hq": "Berlin"}))
    events = await h.on_record_upserted(upserted("rec_b", 1, {"hq": "Munich"}, minute=1))
    assert kinds(events) == ["contradiction.opened", "fact.changed", "fact.changed"]
    opened = next(e for e in events if e.event_type == "contradiction.opened")
    sources = sorted(s.record_id for c in opened.payload.claims for s in c.support)
    assert sources == ["rec_a", "rec_b"]
    assert {e.payload.status for e in events if e.event_type == "fact.changed"} == {"contested"}


async def test_a_tombstone_withdraws_resolves_and_acknowledges_the_prune() -> None:
    store = MemoryStore()
    h = handlers(store)
    await h.on_record_upserted(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 3}))
    await h.on_record_upserted(upserted("rec_b", 1, {"hq": "Munich"}, minute=1))
    events = await h.on_record_tombstoned(tombstoned("rec_a", prune_job_id="job_1", entity_id=None))
    assert kinds(events) == [
        "contradiction.resolved",
        "fact.changed",
        "fact.withdrawn",
        "fact.withdrawn",
        "tombstone.applied",
    ]
    ack = next(e for e in events if e.event_type == "tombstone.applied").payload
    assert ack.counts == {"facts": 2, "articles": 1} and ack.service == "enrichment"
    withdrawn = [e.payload for e in events if e.event_type == "fact.withdrawn"]
    assert all(w.because_record_id == "rec_a" and w.prune_job_id == "job_1" for w in withdrawn)
    resolved = next(e for e in events if e.event_type == "contradiction.resolved").payload
    assert resolved.mode == "automatic" and "tombstoned" in resolved.reason


async def test_a_fact_from_a_record_that_cites_a_passage_carries_it_until_withdrawn() -> None:
    store = MemoryStore()
    h = handlers(store)
    cited = upserted("rec_a", 1, {"hq": "Riga"}, passage_ids=("psg_2",))
    (changed,) = await h.on_record_upserted(cited)
    assert [(s.record_id, s.passage_ids) for s in changed.payload.support] == [("rec_a", ["psg_2"])]
    entity = await KnowledgeBase(store).load("tnt_a", "carrier:c1")
    assert entity is not None
    (fact,) = entity.facts.values()
    assert [s.model_dump()["passage_ids"] for s in fact.support] == [["psg_2"]]
    events = await h.on_record_tombstoned(tombstoned("rec_a", prune_job_id="job_1"))
    assert "fact.withdrawn" in kinds(events)


async def test_a_tombstone_for_an_unknown_record_still_acknowledges() -> None:
    h = handlers(MemoryStore())
    events = await h.on_record_tombstoned(tombstoned("rec_x", prune_job_id="job_2"))
    assert kinds(events) == ["tombstone.applied"]
    assert events[0].payload.counts == {"facts": 0, "articles": 0}


async def test_prune_verification_counts_what_still_rests_on_tombstoned_ids() -> None:
    store = MemoryStore()
    h = handlers(store)
    await h.on_record_upserted(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 3}))
    await h.on_record_upserted(upserted("rec_b", 1, {"hq": "Berlin"}))
    kb = h.knowledge
    entity = await kb.load("tnt_a", "carrier:c1")
    assert entity is not None
    fleet = next(f.fact_id for f in entity.facts.values() if f.attribute == "fleet")
    before = await references(kb, None, "tnt_a", ["rec_a"], [fleet])
    assert before == {
        "records": 2,
        "facts": 1,
        "article_sections": 2,
        "section_vectors": 0,
        "relations": 0,
    }
    events = await h.on_record_tombstoned(tombstoned("rec_a", prune_job_id="job_3"))
    ack = next(e for e in events if e.event_type == "tombstone.applied").payload
    assert ack.source_ids == ["rec_a"]
    after = await references(kb, None, "tnt_a", ["rec_a"], ack.tombstoned_ids)
    assert after == {
        "records": 0,
        "facts": 0,
        "article_sections": 0,
        "section_vectors": 0,
        "relations": 0,
    }
    assert await facts_still_standing(kb, "tnt_a", ack.tombstoned_ids) == 0
    assert await facts_still_standing(kb, "tnt_a", [fact_id("carrier:c1", "hq", "Berlin")]) == 1
