"""A curator's edit is a record like any other: an assertion supports a value with its
provenance, a withdrawal of a value records still assert contests it, and neither is touched by
another record's revision."""

from typing import Literal

import pytest
from pydantic import ValidationError

from engram_enrichment.domain.article import render
from engram_enrichment.domain.contradictions import reconcile, resolve
from engram_enrichment.domain.ids import fact_id
from engram_enrichment.domain.model import CuratorEdit, Entity, RecordAssertion
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.support import assert_record, retract_record
from engram_enrichment.handlers import EnrichmentHandlers
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_events import new_event
from engram_events.catalog import RECORD_UPSERTED
from engram_events.ids import Scalar
from engram_events.payloads.knowledge import Claim, ContradictionOpened
from engram_events.payloads.records import HumanEdit, Lineage, RecordUpserted
from tests.unit.enrichment.fakes import MemoryStore
from tests.unit.enrichment.scenario import SHA, assertion, at, entity, upserted

pytestmark = pytest.mark.unit
SCHEMA = Schema()
BERLIN = fact_id("carrier:c1", "hq", "Berlin")
OSLO = fact_id("carrier:c1", "phone", "+47 1")
KEY = "0123456789abcdef"


def human(
    record_id: str,
    revision: int,
    action: Literal["assert", "withdraw"],
    attribute: str,
    value: Scalar,
    minute: int = 5,
) -> RecordAssertion:
    return RecordAssertion(
        record_id=record_id,
        record_type="carrier",
        revision=revision,
        attributes={attribute: value},
        locator=f"{action} by key {KEY}",
        observed_at=at(minute),
        edit=CuratorEdit(key_id=KEY, action=action, reason="called them", at=at(minute)),
    )


def apply(e: Entity, record: RecordAssertion, cause: str) -> None:
    assert_record(e, record, SCHEMA)
    reconcile(e, SCHEMA, cause=cause, at=record.observed_at, why=f"{record.record_id} revised")


def test_an_asserted_value_is_an_active_fact_whose_article_names_the_key_and_reason() -> None:
    e = entity()
    apply(e, human("rec_h", 1, "assert", "phone", "+47 1"), "e1")
    fact = e.facts[OSLO]
    assert fact.status == "active" and fact.support[0].source == "human"
    line = next(x for x in render(e).splitlines() if "phone" in x)
    assert f"human (curator key `{KEY}`" in line and "called them" in line


def test_a_document_revision_leaves_the_curators_value_supported() -> None:
    e = entity()
    apply(e, assertion("rec_doc", 1, hq="Berlin"), "e1")
    apply(e, human("rec_h", 1, "assert", "phone", "+47 1"), "e2")
    apply(e, assertion("rec_doc", 2, minute=9, hq="Berlin", name="Acme"), "e3")
    assert e.facts[OSLO].status == "active"
    assert [s.record_id for s in e.facts[OSLO].support] == ["rec_h"]


def test_withdrawing_a_value_a_document_asserts_opens_a_contradiction() -> None:
    e = entity()
    apply(e, assertion("rec_doc", 1, hq="Berlin"), "e1")
    apply(e, human("rec_h", 1, "withdraw", "hq", "Berlin"), "e2")
    fact = e.facts[BERLIN]
    assert fact.status == "contested" and [s.record_id for s in fact.support] == ["rec_doc"]
    (item,) = e.contradictions.values()
    assert item.status == "open" and item.attribute == "hq"
    assert [r.edit.key_id for r in item.claims[0].contested_by if r.edit] == [KEY]
    assert "withdrawn by:" in render(e) and "called them" in render(e)


def test_withdrawing_every_value_contests_them_and_a_tombstone_ends_it() -> None:
    e = entity()
    apply(e, assertion("rec_doc", 1, hq="Berlin"), "e1")
    apply(e, human("rec_h", 1, "withdraw", "hq", None), "e2")
    assert e.facts[BERLIN].status == "contested"
    retract_record(e, "rec_h", 1, at(9))
    reconcile(e, SCHEMA, cause="e3", at=at(9), why="rec_h pruned")
    (item,) = e.contradictions.values()
    assert e.facts[BERLIN].status == "active" and item.status == "resolved"


def test_withdrawing_a_value_no_other_record_asserts_withdraws_it() -> None:
    e = entity()
    apply(e, human("rec_h", 1, "assert", "phone", "+47 1"), "e1")
    apply(e, human("rec_h", 2, "withdraw", "phone", "+47 1", minute=6), "e2")
    assert e.facts[OSLO].status == "withdrawn" and not e.contradictions


def test_keeping_the_value_overrules_the_withdrawal_until_the_curator_withdraws_again() -> None:
    e = entity()
    apply(e, assertion("rec_doc", 1, hq="Berlin"), "e1")
    apply(e, human("rec_h", 1, "withdraw", "hq", "Berlin"), "e2")
    (item,) = e.contradictions.values()
    resolve(e, item.contradiction_id, BERLIN, cause="e3", at=at(7))
    apply(e, assertion("rec_doc", 2, minute=8, hq="Berlin", name="Acme"), "e4")
    assert e.facts[BERLIN].status == "active"
    apply(e, human("rec_h", 2, "withdraw", "hq", "Berlin", minute=9), "e5")
    assert e.facts[BERLIN].status == "contested"


async def test_a_withdrawal_through_the_handler_announces_the_contradiction_it_opens() -> None:
    handlers = EnrichmentHandlers(KnowledgeBase(MemoryStore()), SCHEMA)
    await handlers.on_record_upserted(upserted("rec_doc", 1, {"hq": "Berlin"}))
    edit = HumanEdit(key_id=KEY, action="withdraw", reason="moved", at=at(5))
    payload = RecordUpserted(
        record_id="rec_h",
        record_type="carrier",
        entity_id="carrier:c1",
        revision=1,
        attributes={"hq": "Berlin"},
        content_sha256=SHA,
        lineage=Lineage(edit=edit),
        observed_at=at(5),
    )
    events = await handlers.on_record_upserted(
        new_event(RECORD_UPSERTED, payload, tenant_id="tnt_a")
    )
    (opened,) = [e.payload for e in events if e.event_type == "contradiction.opened"]
    (claim,) = opened.claims
    assert claim.fact_id == BERLIN and [s.record_id for s in claim.support] == ["rec_doc"]
    assert [s.edit for s in claim.contested_by] == [edit]


def test_one_uncontested_claim_is_no_contradiction() -> None:
    claim = Claim(fact_id=BERLIN, value="Berlin", support=[])
    with pytest.raises(ValidationError):
        ContradictionOpened(
            contradiction_id="ctr_1", entity_id="carrier:c1", attribute="hq", claims=[claim]
        )
