"""Every query ingest's store makes is served by a declared index and names the tenant."""

from __future__ import annotations

import pytest

from engram_ingest.adapters.store import DOCUMENTS, INDEXES, IngestStore
from tests.support.recording_db import RecordingDatabase, judge, public_methods

pytestmark = pytest.mark.unit

T = "ten_a"


async def test_ingest_queries_are_indexed_and_scoped() -> None:
    document = {
        "_id": f"{T}:doc_1",
        "tenant_id": T,
        "status": "deleted",
        "versions": ["v1"],
        "content_hashes": ["sha"],
    }
    db = RecordingDatabase({DOCUMENTS: [document]})
    store = IngestStore(db)
    outcome = {"status": "extracted"}
    exercise = {
        "IngestStore.put_blob": lambda: store.put_blob(T, "sha", b"x"),
        "IngestStore.record_version": lambda: store.record_version(T, "doc_1", "v1", {}),
        "IngestStore.extract_entry": lambda: store.extract_entry(T, "doc_1", "v1"),
        "IngestStore.record_outcome": lambda: store.record_outcome(T, "doc_1", "v1", outcome),
        "IngestStore.reopen": lambda: store.reopen(T, "doc_1", "v1"),
        "IngestStore.document": lambda: store.document(T, "doc_1"),
        "IngestStore.mark_deleted": lambda: store.mark_deleted(T, "doc_1"),
        "IngestStore.add_content_hash": lambda: store.add_content_hash(T, "doc_1", "sha"),
        "IngestStore.remaining": lambda: store.remaining(T, ["doc_1"]),
        "IngestStore.known": lambda: store.known(T, ["doc_1", "doc_2"]),
    }
    await db.run(exercise)
    verdict = judge(db.calls, INDEXES, tenant_id=T)
    assert not verdict.report(), verdict.report()
    assert public_methods(IngestStore) == set(exercise)
