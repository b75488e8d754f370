"""Declared reference fields: validated on the record type, resolved to the entity ids the
targets' own records get, and carried on each record's drafts."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from engram_extraction.domain.candidates import Candidate
from engram_extraction.domain.records import Source, build, references_of
from engram_extraction.domain.schema import RecordSchema, SchemaRegistry

pytestmark = pytest.mark.unit

SHIPMENT = RecordSchema.model_validate(
    {
        "name": "shipment",
        "id_fields": ["id"],
        "references": [
            {"field": "carrier_id", "to": "carrier", "predicate": "carried_by"},
            {"field": "stops", "to": "warehouse", "predicate": "stops_at", "many": True},
        ],
    }
)


def test_a_single_reference_names_the_entity_its_key_makes() -> None:
    [carried] = references_of({"id": "sh1", "carrier_id": " c1 "}, SHIPMENT)
    assert (carried.field, carried.predicate, carried.object_type, carried.many) == (
        "carrier_id",
        "carried_by",
        "carrier",
        False,
    )
    assert [(t.key, t.entity_id) for t in carried.targets] == [("c1", "carrier:c1")]


def test_a_list_valued_reference_splits_dedupes_and_skips_empty_pieces() -> None:
    [stops] = references_of({"id": "sh1", "stops": "w1; w2;;w1"}, SHIPMENT)
    assert [t.entity_id for t in stops.targets] == ["warehouse:w1", "warehouse:w2"]


def test_an_unsafe_key_is_hashed_as_the_targets_own_record_would_be() -> None:
    [carried] = references_of({"carrier_id": "Acme Freight"}, SHIPMENT)
    assert carried.targets[0].key == "Acme Freight"
    assert carried.targets[0].entity_id.startswith("carrier:h")


def test_missing_or_empty_references_name_nothing() -> None:
    assert references_of({"id": "sh1", "carrier_id": "", "stops": None}, SHIPMENT) == ()
    assert references_of({"carrier_id": "c1"}, None) == ()


def test_drafts_carry_the_references_and_the_target_ids_match_the_targets_records() -> None:
    registry = SchemaRegistry([SHIPMENT, RecordSchema(name="carrier", id_fields=("id",))])
    source = Source(tenant_id="t1", source_item="doc_1", default_type="shipment")
    built = build([Candidate("row:2", {"id": "sh1", "carrier_id": 7})], source, registry)
    [draft] = built.drafts
    [carried] = draft.references
    carrier_source = Source(tenant_id="t1", source_item="doc_2", default_type="carrier")
    carrier = build([Candidate("row:2", {"id": 7})], carrier_source, registry).drafts[0]
    assert carried.targets[0].entity_id == carrier.entity_id == "carrier:7"


@pytest.mark.parametrize(
    ("references", "extra", "problem"),
    [
        ([{"field": "a", "to": "x", "predicate": "p"}] * 2, {}, "declared twice"),
        ([{"field": "id", "to": "x", "predicate": "p"}], {}, "cannot be references"),
        (
            [{"field": "a", "to": "x", "predicate": "p", "many": True}],
            {"single_valued": ["a"]},
            "declared single-valued",
        ),
        ([{"field": "a", "to": "Not A Type", "predicate": "p"}], {}, "pattern"),
        ([{"field": "a", "to": "x", "predicate": "p", "via": "y"}], {}, "via"),
    ],
)
def test_bad_reference_declarations_are_refused(
    references: list[dict[str, object]], extra: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValidationError, match=problem):
        RecordSchema.model_validate(
            {"name": "shipment", "id_fields": ["id"], "references": references, **extra}
        )


def test_a_row_that_fills_a_newly_declared_reference_is_a_new_revision() -> None:
    source = Source(tenant_id="t1", source_item="doc_1", default_type="shipment")
    row = [Candidate("row:2", {"id": "sh1", "carrier_id": "c1"})]
    plain = build(row, source, SchemaRegistry([RecordSchema(name="shipment", id_fields=("id",))]))
    related = build(row, source, SchemaRegistry([SHIPMENT]))
    assert plain.drafts[0].fingerprint == plain.drafts[0].content_sha256[:16]
    assert related.drafts[0].fingerprint != plain.drafts[0].fingerprint
