"""Moving support: a record revision asserts its current values and stops asserting old ones."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engram_enrichment.domain.ids import fact_id_of, value_sha256
from engram_enrichment.domain.model import (
    Entity,
    Fact,
    RecordAssertion,
    RecordState,
    RelationTarget,
    SupportRef,
    Withdrawal,
)
from engram_enrichment.domain.schema import Schema
from engram_events.ids import Scalar


def is_stale(entity: Entity, record_id: str, revision: int) -> bool:
    """An older revision than the one applied, or one at or below a tombstone, changes nothing."""
    prior = entity.records.get(record_id)
    if prior is None:
        return False
    if prior.tombstoned:
        return revision <= prior.revision
    return revision < prior.revision


def asserts_something(value: Scalar) -> bool:
    """Null says nothing (a record cannot hold NaN or infinities: the write contract refuses
    them before any record is made)."""
    return value is not None


def assert_record(entity: Entity, record: RecordAssertion, schema: Schema) -> None:
    """Point this record's support at the facts its revision asserts, creating facts as needed;
    a curator's withdrawal asserts nothing and is kept on the record's state instead. A source
    record's type definition (never a curator's edit, which has none) becomes the entity's."""
    if record.edit is None:
        entity.single_valued = record.single_valued
    if record.edit is not None and record.edit.action == "withdraw":
        _withdraw_by(entity, record, schema)
        return
    claims = _claims(record, schema)
    ref = SupportRef(
        record_id=record.record_id,
        revision=record.revision,
        document_id=record.document_id,
        locator=record.locator,
        passage_ids=record.passage_ids,
        edit=record.edit,
        valid_from=record.valid_from,
        valid_to=record.valid_to,
        recorded_at=record.observed_at,
    )
    wanted: dict[str, tuple[str, Scalar, str, RelationTarget | None]] = {}
    for attribute, value, relation in claims:
        digest = value_sha256(value)
        wanted[fact_id_of(entity.entity_id, attribute, digest)] = (
            attribute,
            value,
            digest,
            relation,
        )
    _drop_support(entity, record.record_id, record.observed_at, keep=_reasserted(wanted))
    for fid, (attribute, value, digest, relation) in sorted(wanted.items()):
        fact = entity.facts.get(fid)
        if fact is None:
            fact = Fact(
                fact_id=fid,
                attribute=attribute,
                value=value,
                value_sha256=digest,
                first_seen=record.observed_at,
                last_seen=record.observed_at,
                valid_from=record.valid_from or record.observed_at,
                recorded_at=record.observed_at,
            )
            entity.facts[fid] = fact
        fact.value = value
        fact.relation = relation
        fact.support = sorted([*fact.support, _continued(fact, ref)], key=lambda s: s.record_id)
        fact.last_seen = max(fact.last_seen, record.observed_at)
    entity.records[record.record_id] = RecordState(
        record_id=record.record_id,
        revision=record.revision,
        observed_at=record.observed_at,
        document_id=record.document_id,
    )


Claim = tuple[str, Scalar, RelationTarget | None]


def _claims(record: RecordAssertion, schema: Schema) -> list[Claim]:
    """(attribute, value, relation) per fact the record asserts: a plain attribute its value; a
    reference field one relation per target, valued by the target's key when it lists several
    (the whole value when it names one, so the fact is the one the attribute always made)."""
    referenced = {r.field: r for r in record.references}
    claims: list[Claim] = []
    for attribute, value in record.attributes.items():
        if not asserts_something(value) or not schema.is_fact(attribute):
            continue
        reference = referenced.get(attribute)
        if reference is None:
            claims.append((attribute, value, None))
            continue
        for target in reference.targets:
            relation = RelationTarget(
                predicate=reference.predicate,
                object_id=target.entity_id,
                object_type=reference.object_type,
                many=reference.many,
            )
            claims.append((attribute, target.key if reference.many else value, relation))
    return claims


def _reasserted(wanted: dict[str, Any]) -> set[str]:
    """Facts the revision asserts (again, perhaps): their old support is held aside for
    `_continued` to decide, so a replay retires nothing."""
    return set(wanted)


def _continued(fact: Fact, ref: SupportRef) -> SupportRef:
    """This fact's copy of the revision's support: one asserting the same period as the
    record's previous revision continues it (keeping its first `recorded_at`); a changed
    period retires the previous one at this revision's time."""
    held = [r for r in fact.retired if r.record_id == ref.record_id and r.retired_at is None]
    fact.retired = [r for r in fact.retired if r.retired_at is not None]
    mine = ref.model_copy()
    for old in held:
        if (old.valid_from, old.valid_to) == (ref.valid_from, ref.valid_to):
            mine.recorded_at = old.recorded_at
        else:
            fact.retired = [*fact.retired, old.model_copy(update={"retired_at": ref.recorded_at})]
    return mine


def _withdraw_by(entity: Entity, record: RecordAssertion, schema: Schema) -> None:
    """The record backs nothing now; its state says which value of which attribute it withdraws
    (`reconcile` contests that value while other records still assert it)."""
    _drop_support(entity, record.record_id, record.observed_at)
    withdraws = None
    for attribute, value in record.attributes.items():
        if schema.is_fact(attribute):
            digest = value_sha256(value) if asserts_something(value) else None
            ref = SupportRef(
                record_id=record.record_id,
                revision=record.revision,
                locator=record.locator,
                edit=record.edit,
            )
            withdraws = Withdrawal(attribute=attribute, value_sha256=digest, ref=ref)
    entity.records[record.record_id] = RecordState(
        record_id=record.record_id,
        revision=record.revision,
        observed_at=record.observed_at,
        withdraws=withdraws,
    )


def withdrawals_of(entity: Entity, fact: Fact) -> list[SupportRef]:
    """Live curators' withdrawals of this fact's value, less those a resolution overruled."""
    if not fact.support:
        return []
    found = [
        state.withdraws.ref
        for state in entity.records.values()
        if state.withdraws is not None
        and not state.tombstoned
        and state.withdraws.attribute == fact.attribute
        and state.withdraws.value_sha256 in (None, fact.value_sha256)
        and f"{state.record_id}@{state.revision}" not in fact.overruled
    ]
    return sorted(found, key=lambda ref: ref.record_id)


MAX_RETIRED = 20
"""Retired support a fact keeps for `as_of` reads (the newest)."""


def _drop_support(
    entity: Entity, record_id: str, at: datetime, keep: set[str] | frozenset[str] = frozenset()
) -> None:
    """The record backs no fact; its support is kept as retired at `at` (for `as_of`), except on
    facts in `keep`, which the record asserts again and whose support simply continues."""
    for fact in entity.facts.values():
        mine = [s for s in fact.support if s.record_id == record_id]
        if not mine:
            continue
        fact.support = [s for s in fact.support if s.record_id != record_id]
        for old in mine:
            if fact.fact_id in keep:
                fact.retired.append(old)
            else:
                fact.retired.append(old.model_copy(update={"retired_at": at}))
        fact.retired = fact.retired[-MAX_RETIRED:]


def retract_record(entity: Entity, record_id: str, revision: int, at: datetime) -> None:
    """A tombstoned record supports nothing any more, now or as of any time: what it supported
    is forgotten, retired support too; its state remembers the tombstone."""
    _drop_support(entity, record_id, at)
    for fact in entity.facts.values():
        fact.retired = [s for s in fact.retired if s.record_id != record_id]
    prior = entity.records.get(record_id)
    entity.records[record_id] = RecordState(
        record_id=record_id,
        revision=max(revision, prior.revision if prior else revision),
        observed_at=at,
        document_id=prior.document_id if prior else None,
        tombstoned=True,
    )
