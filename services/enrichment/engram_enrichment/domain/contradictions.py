"""Statuses from support: withdraw the unsupported, contest disagreements, resolve what ended."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from engram_enrichment.domain.ids import contradiction_id
from engram_enrichment.domain.model import Claim, Contradiction, Entity, Fact, Resolution
from engram_enrichment.domain.periods import close_periods, closed, closer_of, conflicting, span
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.support import withdrawals_of


class ResolutionRefused(ValueError):
    """A resolve request that cannot apply: unknown side, or already resolved otherwise."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


def reconcile(entity: Entity, schema: Schema, *, cause: str, at: datetime, why: str) -> None:
    """Bring every status in line with support; `why` explains support that disappeared. A value
    a curator withdraws while records still assert it is contested, like two disagreeing values."""
    for fact in entity.facts.values():
        fact.contested_by = withdrawals_of(entity, fact)
        if not fact.support and fact.status != "withdrawn":
            _withdraw(fact, at, why)
        elif fact.support and fact.status == "withdrawn":
            fact.status = "active"
            fact.valid_from, fact.valid_to, fact.retired_at = at, None, None
            fact.withdrawn_because = None
    by_attribute: dict[str, list[Fact]] = defaultdict(list)
    for fact in entity.facts.values():
        by_attribute[fact.attribute].append(fact)
    for attribute in sorted(
        {*by_attribute, *(c.attribute for c in entity.contradictions.values())}
    ):
        facts = sorted(by_attribute.get(attribute, []), key=lambda f: f.fact_id)
        live = _sliced(entity, schema, attribute, facts, at)
        open_one = entity.open_contradiction(attribute)
        disagree = conflicting(live) if len(live) >= 2 and _single(entity, schema, live) else set()
        contested = [f for f in live if f.fact_id in disagree or f.contested_by]
        if contested:
            chosen = {f.fact_id for f in contested}
            for fact in live:
                if fact.fact_id not in chosen:
                    fact.status, fact.contradiction_id = "active", None
            _contest(entity, attribute, contested, open_one, cause=cause, at=at)
        else:
            for fact in live:
                fact.status, fact.contradiction_id = "active", None
            if open_one is not None:
                _refresh_claims(entity, open_one)
                winner = live[0].fact_id if live else None
                open_one.status = "resolved"
                open_one.resolved_at, open_one.resolved_by = at, cause
                open_one.resolution = Resolution(
                    winner_fact_id=winner,
                    mode="automatic",
                    reason=f"the other side lost its last support: {why}",
                )


def _single(entity: Entity, schema: Schema, facts: list[Fact]) -> bool:
    """A relation is single-valued unless its reference is list-valued, whatever else the
    type declares; any other attribute as the type's definition, else the schema, says."""
    relations = [f.relation for f in facts if f.relation is not None]
    if relations:
        return not any(r.many for r in relations)
    attribute = facts[0].attribute
    return schema.is_single_valued(entity.entity_type, attribute, entity.single_valued)


def _sliced(
    entity: Entity, schema: Schema, attribute: str, facts: list[Fact], at: datetime
) -> list[Fact]:
    """The attribute's current values: a single-valued one's values closed by a later period
    become `superseded` (their periods kept) and reopen when the later value loses its
    support; every supported value's period is brought up to date."""
    held = [f for f in facts if f.support and f.held]
    if held and _single(entity, schema, held):
        close_periods(held)
    else:
        for fact in held:
            for ref in fact.support:
                ref.closed_at = None
    current: list[Fact] = []
    for fact in held:
        if closed(fact):
            if fact.closed_by is None:
                fact.status, fact.contradiction_id, fact.retired_at = "superseded", None, at
            fact.closed_by = fact.superseded_by = closer_of(fact, held)
        else:
            if fact.closed_by is not None:
                fact.status, fact.closed_by, fact.superseded_by = "active", None, None
                fact.retired_at = None
            current.append(fact)
        fact.valid_from, fact.valid_to = span(fact)
    return current


def _withdraw(fact: Fact, at: datetime, why: str) -> None:
    """No record asserts it any more: keep the fact, drop its content, say why."""
    fact.status = "withdrawn"
    fact.value = None
    fact.valid_to = fact.retired_at = at
    fact.retired = []
    fact.closed_by = None
    fact.contradiction_id = None
    fact.withdrawn_because = why


def _contest(
    entity: Entity,
    attribute: str,
    live: list[Fact],
    open_one: Contradiction | None,
    *,
    cause: str,
    at: datetime,
) -> None:
    """Flag every live value and keep one open contradiction holding all claims."""
    if open_one is None:
        open_one = Contradiction(
            contradiction_id=contradiction_id(entity.entity_id, attribute, cause),
            attribute=attribute,
            claims=[],
            opened_at=at,
            opened_by=cause,
        )
        entity.contradictions[open_one.contradiction_id] = open_one
    for fact in live:
        fact.status, fact.contradiction_id = "contested", open_one.contradiction_id
        if fact.fact_id not in {c.fact_id for c in open_one.claims}:
            open_one.claims.append(
                Claim(fact_id=fact.fact_id, value=fact.value, value_sha256=fact.value_sha256)
            )
    _refresh_claims(entity, open_one)


def _refresh_claims(entity: Entity, contradiction: Contradiction) -> None:
    """Claims mirror their facts' current support; a withdrawn claim keeps only its hash."""
    for claim in contradiction.claims:
        fact = entity.facts.get(claim.fact_id)
        if fact is None or fact.status == "withdrawn":
            claim.value, claim.withdrawn = None, True
            claim.support = fact.support if fact else []
        else:
            claim.value, claim.withdrawn = fact.value, False
            claim.support = list(fact.support)
        claim.contested_by = list(fact.contested_by) if fact else []


def resolve(
    entity: Entity, contradiction_id: str, keep_fact_id: str, *, cause: str, at: datetime
) -> bool:
    """Keep one claim; the other live claims become superseded. False when already so resolved."""
    found = entity.contradictions.get(contradiction_id)
    if found is None:
        raise ResolutionRefused("not-found", "no such contradiction")
    if found.status == "resolved":
        if found.resolution and found.resolution.winner_fact_id == keep_fact_id:
            return False
        raise ResolutionRefused("already-resolved", "the contradiction is already resolved")
    winner = entity.facts.get(keep_fact_id)
    if keep_fact_id not in {c.fact_id for c in found.claims} or winner is None or not winner.live:
        raise ResolutionRefused("not-a-claim", "keep must name a live claim of the contradiction")
    losers = [
        entity.facts[c.fact_id]
        for c in found.claims
        if c.fact_id != keep_fact_id and c.fact_id in entity.facts and entity.facts[c.fact_id].live
    ]
    winner.status, winner.contradiction_id = "active", None
    winner.overruled += [f"{ref.record_id}@{ref.revision}" for ref in winner.contested_by]
    winner.contested_by = []
    for fact in losers:
        fact.status, fact.superseded_by, fact.contradiction_id = "superseded", winner.fact_id, None
        fact.valid_to = fact.retired_at = at
    _refresh_claims(entity, found)
    found.status, found.resolved_at, found.resolved_by = "resolved", at, cause
    found.resolution = Resolution(
        winner_fact_id=winner.fact_id,
        superseded_fact_ids=[f.fact_id for f in losers],
        mode="manual",
        reason=f"a caller kept {winner.fact_id}",
    )
    return True


def claim_for_value(entity: Entity, contradiction_id: str, value_sha256: str) -> str:
    """The claim whose value has this hash (resolve by `{value}`)."""
    found = entity.contradictions.get(contradiction_id)
    if found is None:
        raise ResolutionRefused("not-found", "no such contradiction")
    for claim in found.claims:
        if claim.value_sha256 == value_sha256 and not claim.withdrawn:
            return claim.fact_id
    raise ResolutionRefused("not-a-claim", "the value matches no live claim of the contradiction")
