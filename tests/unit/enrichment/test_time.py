"""Valid time and record time: later periods close earlier ones, overlaps contradict, and reads
see what was true then (`valid_at`) and what Engram knew then (`as_of`)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest

from engram_enrichment.domain.article import render
from engram_enrichment.domain.contradictions import reconcile, resolve
from engram_enrichment.domain.ids import fact_id
from engram_enrichment.domain.model import CuratorEdit, Entity, RecordAssertion
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.support import assert_record, retract_record
from engram_enrichment.domain.timeline import in_time, known_then
from tests.unit.enrichment.scenario import assertion, at, entity

pytestmark = pytest.mark.unit
SCHEMA = Schema()
JAN, FEB, MAR, APR, JUN = (datetime(2026, m, 1, tzinfo=UTC) for m in (1, 2, 3, 4, 6))
R120, R135, R140 = (fact_id("carrier:c1", "rate", v) for v in ("1.20", "1.35", "1.40"))


def dated(
    record_id: str, value: str, start: datetime | None, end: datetime | None = None, minute: int = 0
) -> RecordAssertion:
    record = assertion(record_id, 1, minute=minute, rate=value)
    return record.model_copy(update={"valid_from": start, "valid_to": end})


def apply(e: Entity, record: RecordAssertion, cause: str) -> None:
    assert_record(e, record, SCHEMA)
    reconcile(e, SCHEMA, cause=cause, at=record.observed_at, why=f"{record.record_id} revised")


def applied(*records: RecordAssertion) -> Entity:
    e = entity()
    for n, record in enumerate(records):
        apply(e, record, f"e{n}")
    return e


def test_a_later_period_closes_the_earlier_without_a_contradiction() -> None:
    e = applied(dated("jan", "1.20", JAN), dated("mar", "1.35", MAR, minute=1))
    old, new = e.facts[R120], e.facts[R135]
    assert not e.contradictions
    assert (old.status, old.superseded_by, old.closed_by) == ("superseded", R135, R135)
    assert (old.valid_from, old.valid_to) == (JAN, MAR)
    assert (new.status, new.valid_from, new.valid_to) == ("active", MAR, None)


def test_overlapping_periods_with_different_values_contradict() -> None:
    e = applied(
        dated("jan", "1.20", JAN),
        dated("mar", "1.35", MAR, minute=1),
        dated("dispute", "1.40", MAR, minute=2),
    )
    (item,) = e.contradictions.values()
    assert {c.fact_id for c in item.claims} == {R135, R140}
    assert e.facts[R120].status == "superseded"
    assert e.facts[R135].status == e.facts[R140].status == "contested"


def test_a_stated_end_past_a_later_start_overlaps() -> None:
    e = applied(dated("jan", "1.20", JAN, JUN), dated("mar", "1.35", MAR, minute=1))
    assert e.facts[R120].status == e.facts[R135].status == "contested"


def test_undated_records_disagree_as_they_always_did() -> None:
    e = applied(dated("a", "1.20", None), dated("b", "1.35", None, minute=1))
    assert len(e.contradictions) == 1


def test_arrival_order_does_not_change_the_end_state() -> None:
    records = [
        dated("jan", "1.20", JAN),
        dated("mar", "1.35", MAR, minute=1),
        dated("apr", "1.20", APR, minute=2),
    ]
    states = []
    for order in itertools.permutations(records):
        e = applied(*order)
        states.append(
            {
                fid: (
                    f.status,
                    f.valid_from,
                    f.valid_to,
                    [(s.record_id, s.closed_at) for s in f.support],
                )
                for fid, f in e.facts.items()
            }
        )
        assert not e.contradictions
    assert all(state == states[0] for state in states)
    assert states[0][R120][0] == "active" and states[0][R135][:3] == ("superseded", MAR, APR)


def test_losing_the_later_value_reopens_the_earlier_period() -> None:
    e = applied(dated("jan", "1.20", JAN), dated("mar", "1.35", MAR, minute=1))
    retract_record(e, "mar", 2, at(5))
    reconcile(e, SCHEMA, cause="gone", at=at(5), why="pruned")
    assert (e.facts[R120].status, e.facts[R120].valid_to) == ("active", None)
    assert e.facts[R135].status == "withdrawn" and e.facts[R135].value is None


def test_valid_at_shows_the_value_true_then() -> None:
    e = applied(dated("jan", "1.20", JAN), dated("mar", "1.35", MAR, minute=1))
    feb = in_time(e, SCHEMA, FEB, None)
    assert [(f.value, f.status) for f in feb.facts.values()] == [("1.20", "active")]
    assert [f.value for f in in_time(e, SCHEMA, APR, None).facts.values()] == ["1.35"]
    assert not in_time(e, SCHEMA, datetime(2025, 1, 1, tzinfo=UTC), None).facts
    assert "1.20" in feb.article and "1.35" not in feb.article


def test_as_of_shows_what_was_known_then() -> None:
    e = applied(dated("jan", "1.20", JAN), dated("mar", "1.35", MAR, minute=10))
    then = in_time(e, SCHEMA, None, at(5))
    assert {f.value: (f.status, f.valid_to) for f in then.facts.values()} == {
        "1.20": ("active", None)
    }
    assert known_then(e, at(0)) and not known_then(e, at(-1))
    assert [f.value for f in in_time(e, SCHEMA, APR, at(5)).facts.values()] == ["1.20"]


def test_as_of_sees_support_a_later_revision_retired() -> None:
    e = applied(dated("rec", "1.20", JAN))
    revised = dated("rec", "1.35", JAN, minute=10).model_copy(update={"revision": 2})
    apply(e, revised, "e9")
    assert e.facts[R120].status == "withdrawn"
    assert [f.value for f in in_time(e, SCHEMA, None, at(5)).facts.values()] == []
    same = applied(dated("rec", "1.20", JAN))
    apply(same, dated("rec", "1.20", JAN, minute=10).model_copy(update={"revision": 2}), "e9")
    (ref,) = same.facts[R120].support
    assert ref.recorded_at == at(0) and ref.revision == 2


def test_as_of_before_a_contradiction_shows_it_was_not_open_yet() -> None:
    e = applied(dated("mar", "1.35", MAR), dated("dispute", "1.40", MAR, minute=10))
    then = in_time(e, SCHEMA, None, at(5))
    assert not then.contradictions
    assert [(f.value, f.status) for f in then.facts.values()] == [("1.35", "active")]


def test_a_tombstone_forgets_retired_support_too() -> None:
    e = applied(dated("rec", "1.20", JAN))
    apply(e, dated("rec", "1.20", MAR, minute=1).model_copy(update={"revision": 2}), "e2")
    assert [r.record_id for r in e.facts[R120].retired] == ["rec"]
    retract_record(e, "rec", 3, at(5))
    assert e.facts[R120].retired == []


def test_the_article_shows_stated_periods() -> None:
    e = applied(dated("jan", "1.20", JAN), dated("mar", "1.35", MAR, minute=1))
    article = render(e)
    assert "**rate**: 1.35 — valid from 2026-03-01 — sources" in article
    assert "**rate**: 1.20 — valid from 2026-01-01 to 2026-03-01 — replaced by 1.35" in article
    undated = applied(dated("a", "1.20", None))
    assert "valid from" not in render(undated)


def test_a_replay_changes_nothing_a_curators_edit_included() -> None:
    edit = CuratorEdit(key_id="k1", action="assert", reason="checked", at=at(3))
    records = [
        dated("jan", "1.20", JAN),
        dated("mar", "1.35", MAR, minute=1),
        dated("human", "1.35", None, minute=3).model_copy(update={"edit": edit}),
    ]
    e = applied(*records)
    before = e.state()
    for n, record in enumerate(records):
        apply(e, record, f"again{n}")
    assert _without_causes(e.state()) == _without_causes(before)


def _without_causes(state: dict[str, Any]) -> dict[str, Any]:
    return {
        fid: {k: v for k, v in fact.items() if k not in {"last_cause", "last_change", "history"}}
        for fid, fact in state["facts"].items()
    }


def test_as_of_before_a_resolution_shows_the_contradiction_open() -> None:
    e = applied(dated("a", "1.20", None), dated("b", "1.35", None, minute=1))
    (item,) = e.contradictions.values()
    resolve(e, item.contradiction_id, R135, cause="kept", at=at(10))
    assert e.facts[R120].status == "superseded"
    then = in_time(e, SCHEMA, None, at(5))
    assert {f.value: f.status for f in then.facts.values()} == {
        "1.20": "contested",
        "1.35": "contested",
    }
    assert [c.status for c in then.contradictions.values()] == ["open"]
    legacy = e.model_copy(deep=True)
    legacy.facts[R120].retired_at = None
    assert in_time(legacy, SCHEMA, None, at(15)).facts[R120].status == "superseded"
