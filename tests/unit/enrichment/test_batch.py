"""The batch route announces what the single path would, and fails only the entity at fault."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from engram_enrichment.domain.schema import Schema
from engram_enrichment.handlers import EnrichmentHandlers
from engram_enrichment.ports import ConcurrentUpdate
from engram_enrichment.service.knowledge import KnowledgeBase, NotApplied
from engram_events import Envelope
from tests.unit.enrichment import golden
from tests.unit.enrichment.fakes import MemoryStore, SilentlyIgnoringStore
from tests.unit.enrichment.recall import Harness
from tests.unit.enrichment.scenario import tombstoned, upserted

pytestmark = pytest.mark.unit


def handlers(store: MemoryStore) -> EnrichmentHandlers:
    return EnrichmentHandlers(KnowledgeBase(store), Schema())


class ConflictOn(MemoryStore):
    """Someone else always wrote this one entity (`tenant:entity`) first."""

    def __init__(self, key: str, *, armed: bool = True) -> None:
        super().__init__()
        self.key = key
        self.armed = armed

    async def save(self, tenant_id: str, doc: dict[str, Any], expected_version: int) -> None:
        if self.armed and f"{tenant_id}:{doc['entity_id']}" == self.key:
            raise ConcurrentUpdate(self.key)
        await super().save(tenant_id, doc, expected_version)


class LosesOne(MemoryStore):
    """Writes every entity, but this one's facts lose their support on the way."""

    def __init__(self, entity_id: str) -> None:
        super().__init__()
        self.entity_id = entity_id

    async def save(self, tenant_id: str, doc: dict[str, Any], expected_version: int) -> None:
        damaged = copy.deepcopy(doc)
        if doc["entity_id"] == self.entity_id:
            for fact in damaged["facts"]:
                fact["support"] = []
        await super().save(tenant_id, damaged, expected_version)


def mixed() -> list[Envelope[Any]]:
    """Two entities, a revision, a disagreement, a stale revision and another tenant."""
    return [
        upserted("rec_a", 1, {"name": "Acme", "hq": "Berlin", "fleet": 3}),
        upserted("rec_b", 1, {"name": "Beta"}, entity_id="carrier:c2"),
        upserted("rec_c", 1, {"hq": "Munich"}, minute=1),
        upserted("rec_a", 2, {"name": "Acme", "hq": "Berlin", "fleet": 4}, minute=2),
        upserted("rec_a", 1, {"name": "Old"}, minute=3),
        upserted("rec_d", 1, {"name": "Other"}, tenant="tnt_b"),
    ]


def dumps(events: list[Envelope[Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(str(e.event_id), e.event_type, e.payload.model_dump(mode="json")) for e in events]


def without_versions(store: MemoryStore) -> dict[str, dict[str, Any]]:
    return {k: {**d, "version": None} for k, d in store.entities.items()}


async def test_a_batch_announces_and_stores_what_the_records_would_one_by_one() -> None:
    single_store, batch_store = MemoryStore(), MemoryStore()
    alone, together = handlers(single_store), handlers(batch_store)
    events = mixed()
    expected = [dumps(await alone.on_record_upserted(e)) for e in events]
    results = await together.on_record_upserted_batch(events)
    assert [dumps(r) for r in results if isinstance(r, list)] == expected
    assert without_versions(batch_store) == without_versions(single_store)
    assert batch_store.saves == 3, "one write per entity, not one per record"
    assert batch_store.records == single_store.records
    assert batch_store.contradictions == single_store.contradictions != {}


async def test_replaying_a_batch_stages_the_same_ids_as_replaying_one_by_one() -> None:
    single_store, batch_store = MemoryStore(), MemoryStore()
    alone, together = handlers(single_store), handlers(batch_store)
    events = mixed()
    for event in events:
        await alone.on_record_upserted(event)
    await together.on_record_upserted_batch(events)
    replayed = await together.on_record_upserted_batch(events)
    assert [dumps(r) for r in replayed if isinstance(r, list)] == [
        dumps(await alone.on_record_upserted(e)) for e in events
    ]


async def test_the_golden_scenario_in_one_batch_writes_the_golden_article() -> None:
    store = MemoryStore()
    h = handlers(store)
    events = golden.events("create") + golden.events("contradict")
    results = await h.on_record_upserted_batch(events)
    assert all(isinstance(r, list) for r in results)
    stored = await h.knowledge.load(golden.TENANT, golden.ENTITY)
    assert stored is not None and stored.article == golden.expected("contradict")


async def test_a_conflict_fails_only_the_records_of_that_entity() -> None:
    store = ConflictOn("tnt_a:carrier:c1")
    results = await handlers(store).on_record_upserted_batch(mixed())
    failed = [type(r).__name__ if isinstance(r, Exception) else "ok" for r in results]
    conflict = "ConcurrentUpdate"
    assert failed == [conflict, "ok", conflict, conflict, conflict, "ok"]
    assert sorted(store.entities) == ["tnt_a:carrier:c2", "tnt_b:carrier:c1"]


async def test_an_unconfirmed_write_fails_only_the_records_of_that_entity() -> None:
    store = LosesOne("carrier:c2")
    results = await handlers(store).on_record_upserted_batch(mixed())
    assert [isinstance(r, NotApplied) for r in results] == [False, True, False, False, False, False]
    assert all(isinstance(r, list) for i, r in enumerate(results) if i != 1)


async def test_a_write_that_silently_does_nothing_reports_nothing_applied() -> None:
    store = SilentlyIgnoringStore()
    results = await handlers(store).on_record_upserted_batch(mixed())
    assert all(isinstance(r, NotApplied) for r in results)
    assert store.saves == 3


async def test_a_batch_loads_its_entities_once_per_tenant() -> None:
    store = MemoryStore()
    await handlers(store).on_record_upserted_batch(mixed())
    assert store.bulk_loads == 4, "one load and one read-back per tenant"


async def test_with_recall_a_batch_requests_the_same_embeddings_as_one_by_one() -> None:
    alone, together = Harness(), Harness()
    await alone.open()
    await together.open()
    revise = upserted("rec_c", 2, {"name": "Acme"}, minute=4)
    events = [*mixed(), revise]
    expected = [dumps(await alone.handlers.on_record_upserted(e)) for e in events]
    results = await together.handlers.on_record_upserted_batch(events)
    assert [dumps(r) for r in results if isinstance(r, list)] == expected
    kinds = {kind for answer in expected for _, kind, _ in answer}
    assert "embedding.bulk_requested" in kinds


def tombstones() -> list[Envelope[Any]]:
    """A prune's run: two records of one entity, one of another, one unknown, one repeated."""
    return [
        tombstoned("rec_a", prune_job_id="job_1"),
        tombstoned("rec_b", prune_job_id="job_1", entity_id="carrier:c2"),
        tombstoned("rec_c", prune_job_id="job_1"),
        tombstoned("rec_x", prune_job_id="job_1", entity_id=None),
        tombstoned("rec_a", prune_job_id="job_1"),
    ]


def is_ack(event: Envelope[Any]) -> bool:
    return event.event_type == "tombstone.applied"


def without_acks(answer: list[Envelope[Any]]) -> list[Envelope[Any]]:
    return [e for e in answer if not is_ack(e)]


async def test_a_run_of_tombstones_announces_and_removes_what_they_would_one_by_one() -> None:
    alone, together = Harness(), Harness()
    upserts = mixed()[:4]
    for h in (alone, together):
        await h.open()
        for event in upserts:
            await h.record(event)
    run = tombstones()
    singles = [await alone.tombstone(e, embed=False) for e in run]
    results = await together.handlers.on_record_tombstoned_batch(run)
    answers = [r for r in results if isinstance(r, list)]
    assert len(answers) == len(run)
    assert [dumps(without_acks(r)) for r in answers] == [dumps(without_acks(s)) for s in singles]
    assert "fact.withdrawn" in {e.event_type for answer in singles for e in answer}
    one_each = [e.payload for answer in singles for e in answer if is_ack(e)]
    [merged] = [e for answer in answers for e in answer if is_ack(e)]
    assert merged in answers[-1], "the job's one acknowledgement rides with the last input"
    assert len(one_each) == len(run)
    assert merged.payload.source_ids == list(
        dict.fromkeys(s for ack in one_each for s in ack.source_ids)
    )
    assert set(merged.payload.tombstoned_ids) == {t for a in one_each for t in a.tombstoned_ids}
    for stage in ("facts", "articles", "vectors"):
        assert merged.payload.counts[stage] == sum(a.counts.get(stage, 0) for a in one_each)
    assert without_versions(together.knowledge.store) == without_versions(alone.knowledge.store)  # type: ignore[arg-type]
    left = {"tenant_id": "tnt_a"}
    assert await together.vectors.store.count("knowledge", left) == await alone.vectors.store.count(
        "knowledge", left
    )


async def test_a_run_of_tombstones_reads_its_entities_once() -> None:
    store = MemoryStore()
    h = handlers(store)
    await h.on_record_upserted_batch(mixed()[:4])
    loads = store.bulk_loads
    results = await h.on_record_tombstoned_batch(tombstones())
    assert all(isinstance(r, list) for r in results)
    assert store.bulk_loads - loads == 2, "one load (which also finds what exists), one read-back"


async def test_a_conflict_fails_only_the_tombstones_of_that_entity() -> None:
    store = ConflictOn("tnt_a:carrier:c1", armed=False)
    h = handlers(store)
    await h.on_record_upserted_batch(mixed()[:4])
    store.armed = True
    results = await h.on_record_tombstoned_batch(tombstones())
    failed = [type(r).__name__ if isinstance(r, Exception) else "ok" for r in results]
    conflict = "ConcurrentUpdate"
    assert failed == [conflict, "ok", conflict, "ok", conflict]


async def test_a_replay_announces_the_later_of_two_changes_to_one_fact_in_a_batch() -> None:
    # fleet 3 (rec_a rev 1) then fleet 4 (rev 2) in one batch whose write landed: a replay
    # announces fleet 4 under the first pass's event id, and fleet 3 (overwritten) not again
    together = handlers(MemoryStore())
    events = mixed()
    first = await together.on_record_upserted_batch(events)
    replayed = await together.on_record_upserted_batch(events)

    def fleet(results: list[Any], at: int) -> list[tuple[str, Any]]:
        return [
            (str(e.event_id), e.payload.value)
            for e in results[at]
            if e.event_type == "fact.changed" and e.payload.attribute == "fleet"
        ]

    assert [v for _, v in fleet(first, 0)] == [3] and [v for _, v in fleet(first, 3)] == [4]
    assert fleet(replayed, 0) == [] and fleet(replayed, 3) == fleet(first, 3)
