"""Support moves with a record's revisions; an emptied fact is withdrawn, keeping only hashes."""

import pytest

from engram_enrichment.domain.contradictions import reconcile
from engram_enrichment.domain.ids import fact_id, value_sha256
from engram_enrichment.domain.model import Entity, RecordAssertion
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.support import assert_record, is_stale, retract_record
from tests.unit.enrichment.scenario import assertion, at, entity

pytestmark = pytest.mark.unit
SCHEMA = Schema()


def apply(e: Entity, record: RecordAssertion, cause: str = "c") -> None:
    assert_record(e, record, SCHEMA)
    reconcile(e, SCHEMA, cause=cause, at=record.observed_at, why="w")


def test_fact_ids_are_deterministic_and_typed() -> None:
    assert fact_id("carrier:c1", "fleet", 12) == fact_id("carrier:c1", "fleet", 12)
    assert fact_id("carrier:c1", "fleet", 12) != fact_id("carrier:c1", "fleet", "12")
    assert fact_id("carrier:c1", "fleet", 12).startswith("carrier:c1:fleet:")
    assert ":" not in fact_id("carrier:c1", "home port", 1).split("carrier:c1:")[1][:-17]


def test_a_record_creates_one_active_fact_per_attribute_skipping_identity_and_nulls() -> None:
    e = entity()
    apply(e, assertion("rec_a", 1, id="c1", name="Acme", fleet=12, note=None))
    assert sorted(f.attribute for f in e.facts.values()) == ["fleet", "name"]
    assert all(f.status == "active" for f in e.facts.values())
    name = e.facts[fact_id("carrier:c1", "name", "Acme")]
    assert [(s.record_id, s.revision, s.document_id) for s in name.support] == [
        ("rec_a", 1, "doc_rec_a")
    ]
    assert name.first_seen == name.last_seen == name.valid_from == at(0)


def test_a_revision_moves_support_and_withdraws_the_emptied_fact_without_its_content() -> None:
    e = entity()
    apply(e, assertion("rec_a", 1, name="Acme"))
    apply(e, assertion("rec_a", 2, minute=5, name="Acme Freight"))
    old = e.facts[fact_id("carrier:c1", "name", "Acme")]
    new = e.facts[fact_id("carrier:c1", "name", "Acme Freight")]
    assert old.status == "withdrawn" and old.support == [] and old.value is None
    assert old.value_sha256 == value_sha256("Acme"), "the hash stays, the content goes"
    assert old.valid_to == at(5)
    assert new.status == "active" and [s.revision for s in new.support] == [2]
    assert not e.contradictions, "one source revising its own value is not a contradiction"


def test_a_second_source_with_the_same_value_joins_the_support() -> None:
    e = entity()
    apply(e, assertion("rec_a", 1, name="Acme"))
    apply(e, assertion("rec_b", 1, minute=3, name="Acme"))
    (fact,) = e.facts.values()
    assert [s.record_id for s in fact.support] == ["rec_a", "rec_b"]
    assert fact.first_seen == at(0) and fact.last_seen == at(3)


def test_stale_revisions_and_revisions_at_a_tombstone_are_ignored() -> None:
    e = entity()
    apply(e, assertion("rec_a", 2, name="Acme"))
    assert is_stale(e, "rec_a", 1)
    assert not is_stale(e, "rec_a", 2), "the same revision is a replay and reapplies nothing new"
    retract_record(e, "rec_a", 2, at(9))
    assert is_stale(e, "rec_a", 2) and not is_stale(e, "rec_a", 3)


def test_a_tombstone_removes_the_record_from_every_fact() -> None:
    e = entity()
    apply(e, assertion("rec_a", 1, name="Acme", fleet=3))
    apply(e, assertion("rec_b", 1, name="Acme"))
    retract_record(e, "rec_a", 1, at(9))
    reconcile(e, SCHEMA, cause="t", at=at(9), why="tombstoned")
    statuses = {f.attribute: f.status for f in e.facts.values()}
    assert statuses == {"name": "active", "fleet": "withdrawn"}
    assert all(s.record_id == "rec_b" for f in e.facts.values() for s in f.support)


def test_a_withdrawn_fact_comes_back_when_asserted_again() -> None:
    e = entity()
    apply(e, assertion("rec_a", 1, name="Acme"))
    apply(e, assertion("rec_a", 2, name="Other"))
    apply(e, assertion("rec_a", 3, minute=7, name="Acme"))
    fact = e.facts[fact_id("carrier:c1", "name", "Acme")]
    assert fact.status == "active" and fact.value == "Acme" and fact.valid_to is None


def test_schema_file_format() -> None:
    schema = Schema.from_json({"multi_valued": {"carrier": ["lanes"], "*": ["tags"]}})
    assert not schema.is_single_valued("carrier", "lanes")
    assert not schema.is_single_valued("port", "tags")
    assert schema.is_single_valued("port", "lanes")
    assert not schema.is_fact("id") and schema.is_fact("name")
    with pytest.raises(ValueError):
        Schema.from_json({"multi_valued": ["tags"]})
