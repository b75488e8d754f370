"""Every query enrichment's store makes is served by a declared index and names the tenant."""

from __future__ import annotations

from typing import Any

import pytest

from engram_enrichment.adapters.passages import INDEXES as PASSAGE_INDEXES
from engram_enrichment.adapters.passages import PASSAGES, MongoPassageRows
from engram_enrichment.adapters.relations import INDEXES as RELATION_INDEXES
from engram_enrichment.adapters.relations import RELATIONS, MongoRelationRows
from engram_enrichment.adapters.store import (
    CONTRADICTIONS,
    ENTITIES,
    INDEXES,
    MongoEntityStore,
    pack_entity,
)
from engram_enrichment.ports import ConcurrentUpdate
from engram_platform.indexes import merge
from tests.support.recording_db import RecordingDatabase, judge, public_methods

pytestmark = pytest.mark.unit

T = "ten_a"


async def save_versioned(store: MongoEntityStore, doc: dict[str, Any]) -> None:
    """A versioned replace; the recording database matches nothing, so it reports a conflict."""
    with pytest.raises(ConcurrentUpdate):
        await store.save(T, doc, 1)


async def test_enrichment_queries_are_indexed_and_scoped() -> None:
    entity = pack_entity({"_id": f"{T}:e1", "tenant_id": T, "entity_id": "e1", "version": 1})
    db = RecordingDatabase(
        {
            ENTITIES: [entity],
            CONTRADICTIONS: [{"contradiction_id": "c1"}],
        }
    )
    store = MongoEntityStore(db)
    doc = {"entity_id": "e1", "entity_type": "product", "version": 2}
    exercise = {
        "MongoEntityStore.load": lambda: store.load(T, "e1"),
        "MongoEntityStore.load_many": lambda: store.load_many(T, ["e1", "e2"]),
        "MongoEntityStore.save_many": lambda: store.save_many(T, [(doc, 1), (doc, 0)]),
        "MongoEntityStore.unconfirmed_many": lambda: store.unconfirmed_many(T, {"e9": doc}),
        "MongoEntityStore.save": lambda: store.save(T, doc, 0),
        "MongoEntityStore.index_contradictions": lambda: store.index_contradictions(
            T, [{"contradiction_id": "c1"}]
        ),
        "MongoEntityStore.contradiction": lambda: store.contradiction(T, "c1"),
        "MongoEntityStore.list_contradictions": lambda: store.list_contradictions(T, "open", 10),
        "MongoEntityStore.list_entities": lambda: store.list_entities(T, "product", "e0", 10),
        "MongoEntityStore.remember_record": lambda: store.remember_record(T, "r1", "e1"),
        "MongoEntityStore.remember_records": lambda: store.remember_records(T, [("r1", "e1")]),
        "MongoEntityStore.entities_of_records": lambda: store.entities_of_records(T, ["r1"]),
    }
    unfiltered = {
        "MongoEntityStore.list_contradictions all": lambda: store.list_contradictions(T, None, 5),
        "MongoEntityStore.list_contradictions of an entity": lambda: store.list_contradictions(
            T, None, 10, "supplier:s-1"
        ),
        "MongoEntityStore.list_contradictions of an entity, by status": lambda: (
            store.list_contradictions(T, "open", 10, "supplier:s-1")
        ),
        "MongoEntityStore.list_entities all": lambda: store.list_entities(T, None, None, 5),
        "MongoEntityStore.save versioned": lambda: save_versioned(store, doc),
    }
    await db.run({**exercise, **unfiltered})
    verdict = judge(db.calls, INDEXES, tenant_id=T)
    assert not verdict.report(), verdict.report()
    assert public_methods(MongoEntityStore) == set(exercise)


async def test_passage_rows_are_read_by_id_within_the_tenant() -> None:
    db = RecordingDatabase({PASSAGES: [{"passage_id": "psg_1", "tenant_id": T}]})
    rows = MongoPassageRows(db)
    exercise = {
        "MongoPassageRows.put": lambda: rows.put(T, [{"passage_id": "psg_1"}]),
        "MongoPassageRows.get_many": lambda: rows.get_many(T, ["psg_1", "psg_2"]),
        "MongoPassageRows.remove": lambda: rows.remove(T, ["psg_1"]),
        "MongoPassageRows.count_of_documents": lambda: rows.count_of_documents(T, ["doc_1"]),
        "MongoPassageRows.with_embedded_text": lambda: rows.with_embedded_text(
            T, "doc_1", ["a" * 64]
        ),
    }
    await db.run(exercise)
    verdict = judge(db.calls, merge(INDEXES, PASSAGE_INDEXES), tenant_id=T)
    assert not verdict.report(), verdict.report()
    assert public_methods(MongoPassageRows) == set(exercise)


async def test_relation_rows_are_read_from_either_end_by_index() -> None:
    db = RecordingDatabase(
        {
            RELATIONS: [{"relation_id": "r1", "tenant_id": T}],
            ENTITIES: [{"_id": f"{T}:e1", "entity_id": "e1", "tenant_id": T, "fact_count": 1}],
        }
    )
    rows = MongoRelationRows(db)
    exercise = {
        "MongoRelationRows.put": lambda: rows.put(T, [{"relation_id": "r1"}]),
        "MongoRelationRows.remove": lambda: rows.remove(T, ["r1"]),
        "MongoRelationRows.touching": lambda: rows.touching(T, ["e1"], "subject", None, 10),
        "MongoRelationRows.present": lambda: rows.present(T, ["e1", "e2"]),
    }
    more = {
        "MongoRelationRows.touching in, of a predicate": lambda: rows.touching(
            T, ["e1"], "object", "carried_by", 10
        ),
    }
    await db.run({**exercise, **more})
    verdict = judge(db.calls, merge(INDEXES, RELATION_INDEXES), tenant_id=T)
    assert not verdict.report(), verdict.report()
    assert public_methods(MongoRelationRows) == set(exercise)
