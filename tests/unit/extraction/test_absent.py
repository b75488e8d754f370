"""Records a newer document version no longer asserts are tombstoned; the rest revise as usual."""

from __future__ import annotations

from typing import Any

import pytest

from engram_extraction.domain.records import Draft
from engram_extraction.domain.revisions import Entry, plan
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.service.documents import DocumentExtraction
from tests.unit.extraction.fakes import FakeOutbox, FakePassages, FakeStore, ingested

pytestmark = pytest.mark.unit
V1 = b"id,name\nA,Alpha\nB,Beta\nC,Gamma\n"
V2 = b"id,name\nA,Alpha\nC,Gamma Two\n"


def draft(rid: str, sha: str) -> Draft:
    return Draft(rid, "carrier", f"carrier:{rid}", {"id": rid}, sha * 64, "row 2")


def test_plan_retires_live_records_missing_from_a_complete_version() -> None:
    manifest = {
        "a": Entry(1, "a" * 16, "v1"),
        "b": Entry(2, "b" * 16, "v1"),
        "p": Entry(1, "p" * 16, "tombstoned"),
    }
    done = plan([draft("a", "a")], manifest, "v2", complete=True)
    assert done.absent == ["b"] and done.unchanged == 1 and done.changed
    assert done.manifest["b"] == Entry(2, "b" * 16, "absent:v2")
    assert done.manifest["p"] == manifest["p"], "a pruned record stays as it was"

    replay = plan([draft("a", "a")], done.manifest, "v2", complete=True)
    assert replay.absent == ["b"], "a replay of the same version announces the same retirement"
    late = plan([draft("a", "a"), draft("b", "b")], done.manifest, "v1", complete=True)
    assert late.absent == [] and late.created == late.revised == [], "no resurrection"
    assert not plan([draft("a", "a")], manifest, "v2").absent, "imports retire nothing"


def extraction(store: FakeStore, outbox: FakeOutbox) -> DocumentExtraction:
    return DocumentExtraction(store, SchemaRegistry(), outbox, passages=FakePassages())


def of_type(events: list[Any], event_type: str) -> list[Any]:
    return [e for e in events if e.event_type == event_type]


async def test_a_row_missing_from_v2_is_tombstoned_and_a_changed_row_revised() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    await extraction(store, outbox).extract(ingested(V1))
    ids = {head["entity_id"]: rid for rid, head in store.heads.items()}

    second = ingested(V2)
    events = await extraction(store, outbox).extract(second)
    upserts = [
        (e.payload.entity_id, e.payload.revision) for e in of_type(events, "record.upserted")
    ]
    assert upserts == [("carrier:C", 2)], "A is unchanged: no new revision"
    (gone,) = of_type(events, "record.tombstoned")
    assert gone.payload.record_id == ids["carrier:B"]
    assert gone.payload.reason == "absent_from_version" and gone.payload.last_revision == 1
    assert store.heads[ids["carrier:B"]]["status"] == "tombstoned"
    assert "attributes" not in store.heads[ids["carrier:B"]]
    assert [e["key"] for e in outbox.raw.values()] == [ids["carrier:B"]]
    assert store.revisions() == {ids["carrier:A"]: 1, ids["carrier:B"]: 1, ids["carrier:C"]: 2}

    replay = await extraction(store, outbox).extract(second)
    assert [e.event_id for e in replay] == [e.event_id for e in events], "same ids on replay"
    assert len(outbox.raw) == 1

    late = await extraction(store, outbox).extract(ingested(V1))
    assert of_type(late, "record.tombstoned") == []
    assert store.heads[ids["carrier:B"]]["status"] == "tombstoned", "a late v1 cannot revive B"


async def test_a_failed_version_retires_nothing() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    await extraction(store, outbox).extract(ingested(V1))
    (failed,) = await extraction(store, outbox).extract(ingested(b"id,name\n"))
    assert failed.event_type == "document.extraction_failed"
    assert {h["status"] for h in store.heads.values()} == {"active"}
