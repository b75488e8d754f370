"""An import's records restored as they were exported: ids derived from the target and the
source record, a document's records added in parts without retiring each other, and a second
run (or a replay) revising nothing."""

from __future__ import annotations

from typing import Any

import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import RECORDS_RESTORE_REQUESTED
from engram_events.payloads.records import RecordsRestoreRequested, RestoredRecord
from engram_extraction.domain.schema import RecordSchema, ReferenceField, SchemaRegistry
from engram_extraction.service.restores import RecordRestores
from tests.unit.extraction.fakes import FakeOutbox, FakeStore

pytestmark = pytest.mark.unit
BUNDLED = SchemaRegistry()


def restore(restore_id: str, numbers: range, tenant: str = "tnt_b") -> Envelope[Any]:
    records = [
        RestoredRecord(
            source_record_id=f"rec_{n}",
            record_type="carrier",
            entity_id=f"carrier:c{n}",
            attributes={"id": f"c{n}", "city": f"City {n}"},
            locator=f"row {n}",
        )
        for n in numbers
    ]
    payload = RecordsRestoreRequested(
        restore_id=restore_id,
        source_tenant="tnt_a",
        source_item="doc_new",
        default_type="carrier",
        document_id="doc_new",
        document_version="v1",
        records=records,
    )
    return new_event(RECORDS_RESTORE_REQUESTED, payload, tenant_id=tenant)


def upserts(events: list[Envelope[Any]]) -> list[Any]:
    return [e.payload for e in events if e.event_type == "record.upserted"]


async def test_a_documents_records_restored_in_parts_keep_its_lineage_and_each_other() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    restores = RecordRestores(store, BUNDLED, outbox)
    first = upserts(await restores.restore(restore("rst_1", range(0, 3))))
    second = await restores.restore(restore("rst_2", range(3, 5)))
    assert [e.event_type for e in second].count("record.tombstoned") == 0
    assert len(first) == 3 and len(upserts(second)) == 2
    record = first[0]
    assert (record.entity_id, record.attributes) == ("carrier:c0", {"id": "c0", "city": "City 0"})
    assert record.lineage.document_id == "doc_new" and record.lineage.locator == "row 0"
    assert record.revision == 1
    assert len(store.revisions()) == 5


async def test_a_second_import_revises_nothing_and_a_replay_announces_the_same_ids() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    restores = RecordRestores(store, BUNDLED, outbox)
    event = restore("rst_1", range(0, 3))
    first = await restores.restore(event)
    replayed = await restores.restore(event)
    assert [e.event_id for e in replayed] == [e.event_id for e in first]
    again = await restores.restore(restore("rst_1", range(0, 3)))
    assert [e.event_id for e in again] == [e.event_id for e in first]
    assert set(store.revisions().values()) == {1}


async def test_ids_differ_per_target_tenant_and_are_the_same_every_run() -> None:
    store = FakeStore()
    one = upserts(
        await RecordRestores(store, BUNDLED, FakeOutbox()).restore(restore("r", range(1)))
    )
    other = upserts(
        await RecordRestores(FakeStore(), BUNDLED, FakeOutbox()).restore(
            restore("r", range(1), "tnt_c")
        )
    )
    same = upserts(
        await RecordRestores(FakeStore(), BUNDLED, FakeOutbox()).restore(restore("r", range(1)))
    )
    assert one[0].record_id == same[0].record_id != other[0].record_id


async def test_a_restored_record_is_read_by_the_targets_type_its_references_and_period() -> None:
    carrier = RecordSchema(
        name="carrier",
        id_fields=("id",),
        references=(ReferenceField(field="hub_id", to="warehouse", predicate="based_at"),),
        valid_from_field="effective_date",
    )
    event = restore("rst_1", range(1))
    record = event.payload.records[0]
    attributes = {**record.attributes, "hub_id": "w1", "effective_date": "2026-03-01"}
    payload = event.payload.model_copy(
        update={"records": [record.model_copy(update={"attributes": attributes})]}
    )
    event = new_event(RECORDS_RESTORE_REQUESTED, payload, tenant_id="tnt_b")
    store = FakeStore()
    restores = RecordRestores(store, SchemaRegistry([carrier], origin="tenant"), FakeOutbox())
    [upserted] = upserts(await restores.restore(event))
    assert [t.entity_id for r in upserted.references for t in r.targets] == ["warehouse:w1"]
    assert upserted.valid_from is not None and upserted.valid_from.isoformat().startswith(
        "2026-03-01"
    )
