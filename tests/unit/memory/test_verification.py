"""A prune's verification counts live memories per kind of tombstoned id: on the local server
with one scan, elsewhere with one indexed count per kind."""

from __future__ import annotations

import pytest

from engram_memory.adapters.rows import MEMORIES, MemoryRows
from tests.support.recording_db import RecordingDatabase

pytestmark = pytest.mark.unit

T = "ten_a"


def row(memory_id: str, *sources: str) -> dict[str, object]:
    """A live row deriving from `sources` (none: the field is absent, as on older rows)."""
    found: dict[str, object] = {"_id": f"{T}:{memory_id}", "tenant_id": T, "status": "active"}
    return {**found, "derived_from": list(sources)} if sources else found


async def test_every_kind_is_counted_from_one_scan_on_the_local_server() -> None:
    db = RecordingDatabase({MEMORIES: [row("m1", "r1", "f1"), row("m2", "f2"), row("m3")]})
    counts = await MemoryRows(db, source_index=True).count_derived_from(
        T, {"records": ["r1", "r9"], "facts": ["f1", "f2"], "documents": []}, ["active"]
    )
    assert counts == {"records": 1, "facts": 2, "documents": 0}
    assert [(c.collection, c.method) for c in db.calls] == [(MEMORIES, "find")]


async def test_nothing_is_read_when_no_ids_are_named() -> None:
    db = RecordingDatabase({MEMORIES: [row("m1", "r1")]})
    counts = await MemoryRows(db).count_derived_from(T, {"records": [], "facts": []}, ["active"])
    assert counts == {"records": 0, "facts": 0}
    assert db.calls == []


async def test_elsewhere_each_named_kind_is_one_indexed_count() -> None:
    db = RecordingDatabase({MEMORIES: [row("m1", "r1")]})
    await MemoryRows(db).count_derived_from(
        T, {"records": ["r1"], "facts": ["f1"], "documents": []}, ["active"]
    )
    assert [(c.collection, c.method) for c in db.calls] == [(MEMORIES, "count_documents")] * 2
