"""Record types, entity keys, deterministic ids, schemas and revision planning."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram_events.ids import Scalar
from engram_events.payloads.records import MAX_CITED_PASSAGES
from engram_extraction.domain.candidates import Candidate
from engram_extraction.domain.naming import (
    content_hash,
    entity_key,
    record_id,
    singular,
    type_from_file_name,
)
from engram_extraction.domain.records import Draft, Source, build
from engram_extraction.domain.revisions import Entry, plan
from engram_extraction.domain.schema import RecordSchema, SchemaRegistry

pytestmark = pytest.mark.unit
SOURCE = Source(tenant_id="t1", source_item="doc_1", default_type="carrier", document_id="doc_1")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("carriers.csv", "carrier"),
        ("companies.json", "company"),
        ("boxes.tsv", "box"),
        ("Shipping Addresses.csv", "shipping_address"),
        ("status.csv", "status"),
        ("2024-orders.csv", "r_2024_order"),
        ("....csv", "csv"),
    ],
)
def test_type_from_file_name(name: str, expected: str) -> None:
    assert type_from_file_name(name) == expected


def test_singular_leaves_non_plurals() -> None:
    assert [singular(w) for w in ("class", "bus", "analysis", "data")] == [
        "class",
        "bus",
        "analysis",
        "data",
    ]


def test_record_id_is_deterministic_and_scoped_by_tenant_and_source() -> None:
    rid = record_id("t1", "doc_1", "carrier", "c1")
    assert rid == record_id("t1", "doc_1", "carrier", "c1")
    assert rid != record_id("t2", "doc_1", "carrier", "c1")
    assert rid != record_id("t1", "doc_2", "carrier", "c1")
    assert rid.startswith("rec_") and len(rid) == 36


def test_unsafe_keys_are_hashed_stably() -> None:
    assert entity_key("c1") == "c1"
    assert entity_key("Acme Freight") == entity_key("Acme Freight")
    assert entity_key("Acme Freight").startswith("h")


def test_defaults_type_column_id_column_and_content_hash() -> None:
    built = build(
        [
            Candidate("row 2", {"id": "c1", "name": "Acme"}),
            Candidate("row 3", {"type": "Driver", "id": "d1"}),
            Candidate("row 4", {"name": "No id"}),
        ],
        SOURCE,
        SchemaRegistry(),
    )
    ents = [d.entity_id for d in built.drafts]
    assert ents[0] == "carrier:c1"
    assert ents[1] == "driver:d1"
    assert ents[2] == "carrier:" + content_hash("carrier", {"name": "No id"})[:32]


def test_duplicates_and_invalid_candidates_are_rejected_with_reasons() -> None:
    built = build(
        [
            Candidate("row 2", {"id": "c1"}),
            Candidate("row 3", {"id": "c1", "name": "again"}),
            Candidate("row 4", problem="row has 3 fields, the header has 2"),
        ],
        SOURCE,
        SchemaRegistry(),
    )
    assert len(built.drafts) == 1
    assert [(r.locator, r.reason) for r in built.rejected] == [
        ("row 3", "duplicate entity carrier:c1 (first at row 2)"),
        ("row 4", "row has 3 fields, the header has 2"),
    ]


def test_schema_id_fields_and_required_fields(tmp_path: Path) -> None:
    path = tmp_path / "schemas.json"
    path.write_text(
        json.dumps(
            {
                "types": [
                    {
                        "name": "carrier",
                        "id_fields": ["scac"],
                        "required_fields": ["scac", "name"],
                        "single_valued": ["name"],
                    }
                ]
            }
        )
    )
    registry = SchemaRegistry.load(path)
    assert registry.get("carrier") == RecordSchema(
        name="carrier",
        id_fields=("scac",),
        required_fields=("scac", "name"),
        single_valued=("name",),
    )
    built = build(
        [Candidate("row 2", {"scac": "ACME", "name": "Acme"}), Candidate("row 3", {"scac": "B"})],
        SOURCE,
        registry,
    )
    assert [d.entity_id for d in built.drafts] == ["carrier:ACME"]
    assert built.rejected[0].reason == "missing required field(s): name"


def test_import_forced_type_and_key_field() -> None:
    source = Source("t1", "import:crm", "contact", key_field="email", forced_type="contact")
    built = build([Candidate("rows[0]", {"type": "x", "email": "a@b.c"})], source, SchemaRegistry())
    assert built.drafts[0].entity_id == "contact:a@b.c"


def _drafts(rows: list[dict[str, Scalar]]) -> list[Draft]:
    return build(
        [Candidate(f"row {i}", {**r}) for i, r in enumerate(rows)], SOURCE, SchemaRegistry()
    ).drafts


def test_plan_new_revised_unchanged_and_replayed() -> None:
    first = plan(_drafts([{"id": "c1", "n": "a"}, {"id": "c2", "n": "b"}]), {}, "v1")
    assert [c.revision for c in first.created] == [1, 1]
    second = plan(_drafts([{"id": "c1", "n": "a"}, {"id": "c2", "n": "B"}]), first.manifest, "v2")
    assert second.created == [] and second.unchanged == 1
    assert [(c.revision, c.previous.revision if c.previous else None) for c in second.revised] == [
        (2, 1)
    ]
    replay = plan(_drafts([{"id": "c1", "n": "a"}, {"id": "c2", "n": "B"}]), second.manifest, "v2")
    assert [c.revision for c in replay.replayed] == [2]
    assert replay.written == [] and replay.unchanged == 1


def test_manifest_entries_round_trip() -> None:
    entry = Entry(3, "0123456789abcdef", "cafe")
    assert Entry.decode(entry.encode()) == entry


def test_a_model_item_restating_a_record_from_another_passage_adds_its_citation() -> None:
    """The same carrier said twice in a document's prose cites both passages; an item saying
    something else about it is still set aside, and its passages are not cited."""
    built = build(
        [
            Candidate("llm:item/0", {"id": "c1", "city": "Paris"}, passage_ids=("psg_1",)),
            Candidate("llm:item/1", {"id": "c1", "city": "Paris"}, passage_ids=("psg_3", "psg_1")),
            Candidate("llm:item/2", {"id": "c1", "city": "Oslo"}, passage_ids=("psg_4",)),
        ],
        SOURCE,
        SchemaRegistry(),
    )
    [draft] = built.drafts
    assert draft.passage_ids == ("psg_1", "psg_3") and draft.locator == "llm:item/0"
    assert [(r.locator, r.reason) for r in built.rejected] == [
        ("llm:item/2", "duplicate entity carrier:c1 (first at llm:item/0)")
    ]


def test_restated_citations_stop_at_the_most_a_record_keeps() -> None:
    many = tuple(f"psg_{n}" for n in range(MAX_CITED_PASSAGES))
    built = build(
        [
            Candidate("llm:item/0", {"id": "c1"}, passage_ids=many),
            Candidate("llm:item/1", {"id": "c1"}, passage_ids=("psg_new",)),
        ],
        SOURCE,
        SchemaRegistry(),
    )
    assert built.drafts[0].passage_ids == many and not built.rejected


def test_a_declared_valid_period_is_read_from_the_row_and_a_bad_date_rejects_it() -> None:
    rates = RecordSchema(
        name="carrier",
        id_fields=("id",),
        valid_from_field="effective_date",
        valid_to_field="until",
    )
    built = build(
        [
            Candidate("row 2", {"id": "c1", "rate": "1.20", "effective_date": "2026-01-01"}),
            Candidate("row 3", {"id": "c2", "effective_date": "2026-03-01T12:00:00+02:00"}),
            Candidate("row 4", {"id": "c3", "effective_date": "March 1st"}),
            Candidate("row 5", {"id": "c4", "effective_date": "2026-03-01", "until": "2026-02-01"}),
            Candidate("row 6", {"id": "c5", "rate": "2"}),
        ],
        SOURCE,
        SchemaRegistry([rates]),
    )
    periods = {d.entity_id: (d.valid_from, d.valid_to) for d in built.drafts}
    assert periods == {
        "carrier:c1": (datetime(2026, 1, 1, tzinfo=UTC), None),
        "carrier:c2": (datetime(2026, 3, 1, 10, tzinfo=UTC), None),
        "carrier:c5": (None, None),
    }
    assert [(r.locator, r.reason) for r in built.rejected] == [
        ("row 4", "field 'effective_date' is not an ISO date or date-time"),
        ("row 5", "the valid period ends before it starts"),
    ]


@pytest.mark.parametrize(
    ("declared", "problem"),
    [
        ({"valid_from_field": "id"}, "id field(s) cannot be validity fields"),
        ({"valid_from_field": "d", "valid_to_field": "d"}, "must differ"),
        (
            {"valid_from_field": "c", "references": [{"field": "c", "to": "x", "predicate": "p"}]},
            "reference(s) cannot be validity fields",
        ),
    ],
)
def test_validity_fields_are_checked(declared: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        RecordSchema.model_validate({"name": "carrier", "id_fields": ["id"], **declared})
