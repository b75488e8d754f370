"""Reads in time: what Engram knew as of a moment (record time) and what was true at a moment
(valid time), both evaluated on a copy of the entity from the periods and record times kept.

A withdrawn value's content is gone (a withdrawal or a prune leaves none behind), so no read
in time brings it back; everything else Engram held is kept with when it learned and retired it.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from engram_enrichment.domain.article import render
from engram_enrichment.domain.model import Entity, Fact
from engram_enrichment.domain.periods import close_periods, closed, closer_of, conflicting, span
from engram_enrichment.domain.periods import holds_at as _holds_at
from engram_enrichment.domain.schema import Schema


def _known(fact: Fact, as_of: datetime) -> Fact | None:
    """The fact with only the support recorded by `as_of` and not retired by then."""
    if fact.status == "withdrawn" or fact.first_seen > as_of:
        return None
    visible = [
        ref.model_copy(update={"retired_at": None, "closed_at": None})
        for ref in [*fact.support, *fact.retired]
        if (ref.recorded_at or fact.first_seen) <= as_of
        and (ref.retired_at is None or ref.retired_at > as_of)
    ]
    if not visible:
        return None
    seen = fact.model_copy(deep=True)
    seen.support = sorted(visible, key=lambda ref: (ref.record_id, ref.revision))
    seen.retired = []
    if seen.status == "superseded" and seen.retired_at is not None and seen.retired_at > as_of:
        seen.status, seen.superseded_by, seen.closed_by, seen.retired_at = (
            "active",
            None,
            None,
            None,
        )
    return seen


def _single(entity: Entity, schema: Schema, facts: list[Fact]) -> bool:
    relations = [f.relation for f in facts if f.relation is not None]
    if relations:
        return not any(r.many for r in relations)
    return schema.is_single_valued(entity.entity_type, facts[0].attribute, entity.single_valued)


def known_as_of(entity: Entity, schema: Schema, as_of: datetime) -> Entity:
    """The entity as Engram knew it at `as_of`: support recorded by then and not yet retired,
    periods closed and values contested among that support alone, contradictions opened by
    then (open unless resolved by then)."""
    view = entity.model_copy(deep=True)
    kept = {fid: f for fid, f in ((fid, _known(f, as_of)) for fid, f in entity.facts.items()) if f}
    view.facts = kept
    view.contradictions = {
        cid: item.model_copy(deep=True)
        for cid, item in entity.contradictions.items()
        if item.opened_at <= as_of
    }
    for item in view.contradictions.values():
        if item.resolved_at is not None and item.resolved_at > as_of:
            item.status, item.resolved_at, item.resolution = "open", None, None
    by_attribute: dict[str, list[Fact]] = defaultdict(list)
    for fact in kept.values():
        if fact.held:
            by_attribute[fact.attribute].append(fact)
    for facts in by_attribute.values():
        facts.sort(key=lambda f: f.fact_id)
        single = _single(entity, schema, facts)
        if single:
            close_periods(facts)
        current = []
        for fact in facts:
            if single and closed(fact):
                fact.status, fact.contradiction_id = "superseded", None
                fact.closed_by = fact.superseded_by = closer_of(fact, facts)
            else:
                fact.closed_by = fact.superseded_by = None
                current.append(fact)
            fact.valid_from, fact.valid_to = span(fact)
        disagree = conflicting(current) if single and len(current) >= 2 else set()
        for fact in current:
            contested = fact.fact_id in disagree or bool(fact.contested_by)
            fact.status = "contested" if contested else "active"
            if fact.contradiction_id not in view.contradictions or not contested:
                fact.contradiction_id = None
    view.article = render(view)
    return view


def true_at(entity: Entity, valid_at: datetime) -> Entity:
    """The entity's values that held at `valid_at`: current ones and those a later period
    closed (shown `active`, as they were then, with `superseded_by` naming what followed),
    each whose period contains it."""
    view = entity.model_copy(deep=True)
    view.facts = {
        fid: fact for fid, fact in view.facts.items() if fact.held and _holds_at(fact, valid_at)
    }
    for fact in view.facts.values():
        if fact.closed_by is not None:
            fact.status = "active"
    view.article = render(view)
    return view


def in_time(
    entity: Entity, schema: Schema, valid_at: datetime | None, as_of: datetime | None
) -> Entity:
    """The entity as known `as_of` (record time), then as true `valid_at` (valid time)."""
    view = known_as_of(entity, schema, as_of) if as_of is not None else entity
    return true_at(view, valid_at) if valid_at is not None else view


def known_then(entity: Entity, as_of: datetime) -> bool:
    """Engram had heard of the entity by `as_of` (a record of it was recorded by then)."""
    return any(fact.first_seen <= as_of for fact in entity.facts.values())
