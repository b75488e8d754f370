"""A prune's verification counts live memories per kind of tombstoned id with one scan."""

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


async def test_every_kind_is_counted_from_one_scan() -> None:
    db = RecordingDatabase({MEMORIES: [row("m1", "r1", "f1"), row("m2", "f2"), row("m3")]})
    counts = await MemoryRows(db).count_derived_from(
        T, {"records": ["r1", "r9"], "facts": ["f1", "f2"], "documents": []}, ["active"]
    )
    assert counts == {"records": 1, "facts": 2, "documents": 0}
    assert [(c.collection, c.method) for c in db.calls] == [(MEMORIES, "find")]


async def test_nothing_is_read_when_no_ids_are_named() -> None:
    db = RecordingDatabase({MEMORIES: [row("m1", "r1")]})
    counts = await MemoryRows(db).count_derived_from(T, {"records": [], "facts": []}, ["active"])
    assert counts == {"records": 0, "facts": 0}
    assert db.calls == []
