"""Disagreement between sources is a record with both claims; resolution supersedes the loser."""

import pytest

from engram_enrichment.domain.contradictions import (
    ResolutionRefused,
    claim_for_value,
    reconcile,
    resolve,
)
from engram_enrichment.domain.ids import fact_id, value_sha256
from engram_enrichment.domain.model import Entity, RecordAssertion
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.support import assert_record, retract_record
from tests.unit.enrichment.scenario import assertion, at, entity

pytestmark = pytest.mark.unit
SCHEMA = Schema(multi_valued={"*": frozenset({"tags"})})
BERLIN = fact_id("carrier:c1", "hq", "Berlin")
MUNICH = fact_id("carrier:c1", "hq", "Munich")


def apply(e: Entity, record: RecordAssertion, cause: str) -> None:
    assert_record(e, record, SCHEMA)
    reconcile(e, SCHEMA, cause=cause, at=record.observed_at, why=f"{record.record_id} revised")


def disagreeing() -> Entity:
    e = entity()
    apply(e, assertion("rec_a", 1, hq="Berlin", name="Acme"), "e1")
    apply(e, assertion("rec_b", 1, minute=1, hq="Munich", name="Acme"), "e2")
    return e


def test_two_sources_disagreeing_open_one_contradiction_with_both_claims() -> None:
    e = disagreeing()
    (item,) = e.contradictions.values()
    assert item.status == "open" and item.attribute == "hq" and item.opened_by == "e2"
    claims = {c.fact_id: [s.record_id for s in c.support] for c in item.claims}
    assert claims == {BERLIN: ["rec_a"], MUNICH: ["rec_b"]}
    assert e.facts[BERLIN].status == e.facts[MUNICH].status == "contested"
    assert e.facts[BERLIN].contradiction_id == item.contradiction_id
    assert e.facts[fact_id("carrier:c1", "name", "Acme")].status == "active"


def test_reapplying_the_same_records_opens_nothing_new() -> None:
    e = disagreeing()
    apply(e, assertion("rec_a", 1, hq="Berlin", name="Acme"), "e3")
    apply(e, assertion("rec_b", 1, minute=1, hq="Munich", name="Acme"), "e4")
    assert len(e.contradictions) == 1


def test_multi_valued_attributes_never_contradict() -> None:
    e = entity()
    apply(e, assertion("rec_a", 1, tags="air"), "e1")
    apply(e, assertion("rec_b", 1, tags="sea"), "e2")
    assert not e.contradictions
    assert {f.status for f in e.facts.values()} == {"active"}


def test_a_third_value_joins_the_open_contradiction() -> None:
    e = disagreeing()
    apply(e, assertion("rec_c", 1, hq="Paris"), "e3")
    (item,) = e.contradictions.values()
    assert len(item.claims) == 3


def test_resolving_keeps_the_winner_and_supersedes_the_loser() -> None:
    e = disagreeing()
    (item,) = e.contradictions.values()
    assert resolve(e, item.contradiction_id, BERLIN, cause="r", at=at(10))
    assert e.facts[BERLIN].status == "active"
    loser = e.facts[MUNICH]
    assert loser.status == "superseded" and loser.superseded_by == BERLIN
    assert item.status == "resolved" and item.resolution is not None
    assert item.resolution.mode == "manual" and item.resolution.superseded_fact_ids == [MUNICH]
    assert not resolve(e, item.contradiction_id, BERLIN, cause="r", at=at(11)), "idempotent"
    with pytest.raises(ResolutionRefused) as refused:
        resolve(e, item.contradiction_id, MUNICH, cause="r2", at=at(12))
    assert refused.value.kind == "already-resolved"


def test_resolving_by_value_and_refusing_strangers() -> None:
    e = disagreeing()
    (item,) = e.contradictions.values()
    assert claim_for_value(e, item.contradiction_id, value_sha256("Munich")) == MUNICH
    with pytest.raises(ResolutionRefused):
        claim_for_value(e, item.contradiction_id, value_sha256("Paris"))
    with pytest.raises(ResolutionRefused):
        resolve(e, item.contradiction_id, "carrier:c1:hq:0000", cause="r", at=at(3))


def test_a_side_losing_its_support_resolves_the_contradiction_and_says_why() -> None:
    e = disagreeing()
    apply(e, assertion("rec_b", 2, minute=4, hq="Berlin", name="Acme"), "e3")
    (item,) = e.contradictions.values()
    assert item.status == "resolved" and item.resolution is not None
    assert item.resolution.mode == "automatic" and item.resolution.winner_fact_id == BERLIN
    assert "rec_b revised" in item.resolution.reason
    munich = next(c for c in item.claims if c.fact_id == MUNICH)
    assert munich.withdrawn and munich.value is None
    assert e.facts[BERLIN].status == "active" and len(e.facts[BERLIN].support) == 2
    assert e.facts[MUNICH].status == "withdrawn"


def test_a_tombstone_resolves_the_contradiction_it_empties() -> None:
    e = disagreeing()
    retract_record(e, "rec_a", 1, at(6))
    reconcile(e, SCHEMA, cause="t", at=at(6), why="record rec_a was tombstoned (prune)")
    (item,) = e.contradictions.values()
    assert item.status == "resolved" and item.resolution is not None
    assert item.resolution.winner_fact_id == MUNICH and "tombstoned" in item.resolution.reason
    assert e.facts[BERLIN].status == "withdrawn"


def test_a_declared_type_names_exactly_its_single_valued_attributes() -> None:
    e = entity()
    declared = ["hq"]
    apply(
        e,
        assertion("rec_a", 1, hq="Berlin", lanes="air").model_copy(
            update={"single_valued": declared}
        ),
        "e1",
    )
    apply(
        e,
        assertion("rec_b", 1, minute=1, hq="Munich", lanes="sea").model_copy(
            update={"single_valued": declared}
        ),
        "e2",
    )
    assert e.single_valued == ["hq"]
    (item,) = e.contradictions.values()
    assert item.attribute == "hq"


def test_a_declared_single_valued_attribute_contradicts_even_when_the_file_says_multi() -> None:
    e = entity()
    declared = ["tags"]
    apply(e, assertion("rec_a", 1, tags="air").model_copy(update={"single_valued": declared}), "e1")
    apply(e, assertion("rec_b", 1, tags="sea").model_copy(update={"single_valued": declared}), "e2")
    (item,) = e.contradictions.values()
    assert item.attribute == "tags"


def test_without_a_declaration_the_file_decides_again() -> None:
    e = entity()
    apply(e, assertion("rec_a", 1, lanes="air").model_copy(update={"single_valued": []}), "e1")
    apply(
        e,
        assertion("rec_b", 1, minute=1, lanes="sea").model_copy(update={"single_valued": []}),
        "e2",
    )
    assert not e.contradictions
    apply(e, assertion("rec_b", 2, minute=2, lanes="sea"), "e3")
    assert e.single_valued is None
    (item,) = e.contradictions.values()
    assert item.attribute == "lanes"
