"""Moving support: a record revision asserts its current values and stops asserting old ones."""

from __future__ import annotations

from datetime import datetime

from engram_enrichment.domain.ids import fact_id_of, value_sha256
from engram_enrichment.domain.model import (
    Entity,
    Fact,
    RecordAssertion,
    RecordState,
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
    claims = {
        attribute: value
        for attribute, value in record.attributes.items()
        if asserts_something(value) and schema.is_fact(attribute)
    }
    ref = SupportRef(
        record_id=record.record_id,
        revision=record.revision,
        document_id=record.document_id,
        locator=record.locator,
        passage_ids=record.passage_ids,
        edit=record.edit,
    )
    digests = {a: value_sha256(v) for a, v in claims.items()}
    wanted = {fact_id_of(entity.entity_id, a, digests[a]): (a, v) for a, v in claims.items()}
    _drop_support(entity, record.record_id)
    for fid, (attribute, value) in sorted(wanted.items()):
        fact = entity.facts.get(fid)
        if fact is None:
            fact = Fact(
                fact_id=fid,
                attribute=attribute,
                value=value,
                value_sha256=digests[attribute],
                first_seen=record.observed_at,
                last_seen=record.observed_at,
                valid_from=record.observed_at,
            )
            entity.facts[fid] = fact
        fact.value = value
        fact.support = sorted([*fact.support, ref], key=lambda s: s.record_id)
        fact.last_seen = max(fact.last_seen, record.observed_at)
    entity.records[record.record_id] = RecordState(
        record_id=record.record_id,
        revision=record.revision,
        observed_at=record.observed_at,
        document_id=record.document_id,
    )


def _withdraw_by(entity: Entity, record: RecordAssertion, schema: Schema) -> None:
    """The record backs nothing now; its state says which value of which attribute it withdraws
    (`reconcile` contests that value while other records still assert it)."""
    _drop_support(entity, record.record_id)
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


def _drop_support(entity: Entity, record_id: str) -> None:
    """The record backs no fact; facts it did not back are left untouched."""
    for fact in entity.facts.values():
        if any(s.record_id == record_id for s in fact.support):
            fact.support = [s for s in fact.support if s.record_id != record_id]


def retract_record(entity: Entity, record_id: str, revision: int, at: datetime) -> None:
    """A tombstoned record supports nothing any more; its state remembers the tombstone."""
    _drop_support(entity, record_id)
    prior = entity.records.get(record_id)
    entity.records[record_id] = RecordState(
        record_id=record_id,
        revision=max(revision, prior.revision if prior else revision),
        observed_at=at,
        document_id=prior.document_id if prior else None,
        tombstoned=True,
    )
