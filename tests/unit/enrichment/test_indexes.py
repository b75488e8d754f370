"""Every query enrichment's store makes is served by a declared index and names the tenant."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engram_embedders.moving import ReindexDocument
from engram_embedders.reindex import Reindex, Space
from engram_enrichment.adapters.passages import INDEXES as PASSAGE_INDEXES
from engram_enrichment.adapters.passages import PASSAGES, MongoPassageRows, passage_doc
from engram_enrichment.adapters.reindex import REINDEX, STORE, KnowledgeWalkStore
from engram_enrichment.adapters.relations import INDEXES as RELATION_INDEXES
from engram_enrichment.adapters.relations import RELATIONS, MongoRelationRows
from engram_enrichment.adapters.store import (
    CONTRADICTIONS,
    ENTITIES,
    INDEXES,
    MongoEntityStore,
    pack_entity,
)
from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.ports import ConcurrentUpdate
from engram_events.payloads.passages import PassageUpserted
from engram_platform.indexes import merge
from tests.support.recording_db import RecordingDatabase, judge, public_methods

pytestmark = pytest.mark.unit

T = "ten_a"
AT = datetime(2026, 12, 5, tzinfo=UTC)
PASSAGE_UPSERTED = PassageUpserted(
    passage_id="psg_1",
    document_id="doc_1",
    version="v1",
    name="manual.md",
    ordinal=0,
    start=0,
    end=4,
    text="text",
    text_sha256="0" * 64,
)


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
    stored = PassageRow(T, PASSAGE_UPSERTED, "0" * 64)
    db = RecordingDatabase({PASSAGES: [passage_doc(stored)]})
    rows = MongoPassageRows(db)
    exercise = {
        "MongoPassageRows.put": lambda: rows.put([stored]),
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
        "MongoRelationRows.by_id": lambda: rows.by_id(T, ["r1", "r2"]),
        "MongoRelationRows.in_order": lambda: rows.in_order(
            T, ["e1", "e2"], "subject", None, None, 10, ("relation_id",)
        ),
    }
    more = {
        "MongoRelationRows.in_order in, of a predicate, from a key": lambda: rows.in_order(
            T, ["e1"], "object", "carried_by", ("carried_by", "e9"), 10, ("relation_id",)
        ),
        "MongoRelationRows.in_order, the predicates after one": lambda: rows.in_order(
            T, ["e1"], "subject", None, ("carried_by", None), 10, ("relation_id",)
        ),
        "MongoRelationRows.touching in, of a predicate": lambda: rows.touching(
            T, ["e1"], "object", "carried_by", 10
        ),
        "MongoRelationRows.touching, a walk's fields": lambda: rows.touching(
            T, ["e1"], "subject", None, 10, ("relation_id", "subject_id", "object_id")
        ),
    }
    await db.run({**exercise, **more})
    verdict = judge(db.calls, merge(INDEXES, RELATION_INDEXES), tenant_id=T)
    assert not verdict.report(), verdict.report()
    assert public_methods(MongoRelationRows) == set(exercise)


WALK = "a reindex moves the collection every tenant shares, so it walks every tenant's documents"


async def test_a_knowledge_reindex_walks_every_tenant_by_id() -> None:
    entity = pack_entity(
        {"_id": f"{T}:e1", "tenant_id": T, "entity_id": "e1", "version": 1, "facts": []}
    )
    db = RecordingDatabase(
        {
            ENTITIES: [entity],
            PASSAGES: [passage_doc(PassageRow(T, PASSAGE_UPSERTED, "0" * 64))],
            REINDEX: [],
        }
    )
    walk = KnowledgeWalkStore(db)
    document = ReindexDocument(db, REINDEX, STORE)
    job = Reindex(Space("knowledge", "hashing", 64), Space("knowledge-x", "hashing", 48), "f", AT)
    exercise = {
        "KnowledgeWalkStore.entities": lambda: walk.entities(f"{T}:e0", 10),
        "KnowledgeWalkStore.entities_by_keys": lambda: walk.entities_by_keys([f"{T}:e1"]),
        "KnowledgeWalkStore.entities_updated_between": lambda: walk.entities_updated_between(
            AT, AT, f"{T}:e0", 10
        ),
        "KnowledgeWalkStore.passages": lambda: walk.passages(f"{T}:psg_0", 10),
        "KnowledgeWalkStore.passages_by_keys": lambda: walk.passages_by_keys([f"{T}:psg_1"]),
        "ReindexDocument.load": lambda: document.load(),
        "ReindexDocument.save": lambda: document.save(job),
        "ReindexDocument.switch": lambda: document.switch(job),
    }
    await db.run(exercise)
    verdict = judge(
        db.calls,
        merge(INDEXES, PASSAGE_INDEXES),
        tenant_id=T,
        unindexed={
            ("KnowledgeWalkStore.entities_updated_between", ENTITIES): "once per reindex, "
            "before its switch: the entities written around its start, walked in `_id` order",
        },
        tenant_free={
            ("KnowledgeWalkStore.entities", ENTITIES): WALK,
            ("KnowledgeWalkStore.entities_by_keys", ENTITIES): WALK + " (by `_id`)",
            ("KnowledgeWalkStore.entities_updated_between", ENTITIES): WALK,
            ("KnowledgeWalkStore.passages", PASSAGES): WALK,
            ("KnowledgeWalkStore.passages_by_keys", PASSAGES): WALK + " (by `_id`)",
            ("ReindexDocument.load", REINDEX): "one document for the whole store",
            ("ReindexDocument.save", REINDEX): "one document for the whole store",
            ("ReindexDocument.switch", REINDEX): "one document for the whole store",
        },
    )
    assert not verdict.report(), verdict.report()
    assert public_methods(KnowledgeWalkStore, ReindexDocument) == set(exercise)
