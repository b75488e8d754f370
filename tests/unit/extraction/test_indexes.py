"""Every query extraction's stores make is served by a declared index and names the tenant."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram_events.payloads.prune import PruneSelector
from engram_extraction.adapters.mapping import record_head
from engram_extraction.adapters.passages import INDEXES as PASSAGE_INDEXES
from engram_extraction.adapters.passages import PASSAGE_HEADS, PassageStore
from engram_extraction.adapters.store import INDEXES, RECORDS, RecordStore
from engram_extraction.adapters.tombstones import TombstoneStore
from engram_extraction.adapters.types import INDEXES as TYPE_INDEXES
from engram_extraction.adapters.types import TypeStore
from engram_extraction.domain.records import Draft, Rejection, Source
from engram_extraction.domain.revisions import Change, Entry
from engram_extraction.domain.schema import RecordSchema
from engram_extraction.domain.tombstones import Marker
from engram_extraction.domain.types import TypeVersion
from engram_platform.indexes import merge
from tests.support.recording_db import RecordingDatabase, judge, public_methods

pytestmark = pytest.mark.unit

T = "ten_a"
AT = datetime(2026, 12, 1, tzinfo=UTC)
HEAD = {
    "_id": f"{T}:r1",
    "tenant_id": T,
    "record_id": "r1",
    "status": "active",
    "content_sha256": "0" * 64,
    "revision": 2,
    "source_item": "doc_1",
    "updated_at": AT,
}
SOURCE = Source(T, "doc_1", "row", document_id="doc_1", document_version="v1")
DRAFT = Draft("r1", "row", "e1", {"a": 1}, "sha", "row:1")
SELECTORS = [
    PruneSelector(older_than_days=30),
    PruneSelector(older_than_days=30, record_type="row", status="active"),
    PruneSelector(older_than_days=30, document_id="doc_1"),
]


async def test_extraction_queries_are_indexed_and_scoped() -> None:
    db = RecordingDatabase(
        {
            RECORDS: [HEAD],
            "attempts": [{"attempts": 1}],
            PASSAGE_HEADS: [{"_id": f"{T}:doc_1", "tenant_id": T, "version": "v1"}],
        }
    )
    store = RecordStore(db)
    passages = PassageStore(db)
    row = {"passage_id": "psg_1", "document_id": "doc_1", "version": "v1", "ordinal": 0}
    tombstones = TombstoneStore(store)
    types = TypeStore(db)
    first = TypeVersion("order", 1, RecordSchema(name="order"), AT)
    marker = Marker(AT, "prune", "job_1")
    entries = {"r1": Entry(1, "f", "c")}
    change = Change(DRAFT, 2, Entry(1, "f", "c"))
    exercise = {
        "RecordStore.manifest": lambda: store.manifest(T, "doc_1"),
        "RecordStore.save_manifest": lambda: store.save_manifest(T, "doc_1", entries, AT),
        "RecordStore.write": lambda: store.write(T, SOURCE, [change], [change], AT),
        "RecordStore.keep_rejected": lambda: store.keep_rejected(
            T, SOURCE, "c", [Rejection("row:2", "bad")], AT
        ),
        "RecordStore.count_attempt": lambda: store.count_attempt(T, "k"),
        "RecordStore.failed_attempts": lambda: store.failed_attempts(T, "k"),
        "RecordStore.save_import": lambda: store.save_import(T, "imp_1", status="done"),
        "RecordStore.import_status": lambda: store.import_status(T, "imp_1"),
        "RecordStore.record": lambda: store.record(T, "r1"),
        "RecordStore.known": lambda: store.known(T, ["r1", "r2"]),
        "RecordStore.list_records": lambda: store.list_records(
            T, filters={}, after=(AT, "r0"), limit=10
        ),
        "RecordStore.heads_by_id": lambda: store.heads_by_id(T, ["r1"]),
        "RecordStore.live_among": lambda: store.live_among(T, ["r1"]),
        "RecordStore.replace_with_markers": lambda: store.replace_with_markers(
            T, [record_head(HEAD)], marker
        ),
        "TombstoneStore.heads_by_id": lambda: tombstones.heads_by_id(T, ["r1"]),
        "TombstoneStore.selected_heads": lambda: tombstones.selected_heads(T, SELECTORS[0], AT),
        "TombstoneStore.job_markers": lambda: tombstones.job_markers(T, "job_1"),
        "TombstoneStore.document_record_ids": lambda: tombstones.document_record_ids(T, "doc_1"),
        "TombstoneStore.tombstone": lambda: tombstones.tombstone(T, [record_head(HEAD)], marker),
        "PassageStore.write_passages": lambda: passages.write_passages(T, "doc_1", "v1", [row], AT),
        "PassageStore.current_passages": lambda: passages.current_passages(T, "doc_1", -1, 10),
        "PassageStore.current_passages after": lambda: passages.current_passages(T, "doc_1", 4, 10),
        "PassageStore.document_passages": lambda: passages.document_passages(T, "doc_1"),
        "PassageStore.withdraw_passages": lambda: passages.withdraw_passages(
            T, ["psg_1"], "cause", AT
        ),
        "PassageStore.drop_head": lambda: passages.drop_head(T, "doc_1"),
        "PassageStore.live_passages_of": lambda: passages.live_passages_of(T, ["doc_1"]),
        "TypeStore.heads": lambda: types.heads(T),
        "TypeStore.head": lambda: types.head(T, "order"),
        "TypeStore.version": lambda: types.version(T, "order", 2),
        "TypeStore.versions": lambda: types.versions(T, "order"),
        "TypeStore.change": lambda: types.change(T, first),
        "TypeStore.change after": lambda: types.change(T, TypeVersion("order", 2, None, AT)),
    }
    listings = {
        f"RecordStore.list_records {filters}": (
            lambda filters=filters: store.list_records(
                T, filters=filters, after=(AT, "r0"), limit=5
            )
        )
        for filters in (
            {"record_type": "row"},
            {"document_id": "doc_1"},
            {"entity_id": "e1", "record_type": "row"},
        )
    }
    prunes = {
        f"TombstoneStore.selected_heads {n}": (
            lambda s=selector: tombstones.selected_heads(T, s, AT)
        )
        for n, selector in enumerate(SELECTORS)
    }
    await db.run({**exercise, **listings, **prunes})
    verdict = judge(db.calls, merge(INDEXES, PASSAGE_INDEXES, TYPE_INDEXES), tenant_id=T)
    assert not verdict.report(), verdict.report()
    assert public_methods(RecordStore, TombstoneStore, PassageStore, TypeStore) == {
        name for name in exercise if not name.endswith(" after")
    }
