"""From candidates to record drafts: type, entity key, deterministic id, hash and lineage."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime

from engram_events.ids import Scalar
from engram_events.payloads.records import (
    MAX_CITED_PASSAGES,
    MAX_REFERENCES,
    HumanEdit,
    Reference,
    ReferenceTarget,
)
from engram_extraction.domain.candidates import Candidate
from engram_extraction.domain.naming import (
    content_hash,
    entity_id,
    entity_key,
    record_id,
    type_name,
)
from engram_extraction.domain.schema import Declared, RecordSchema, SchemaRegistry
from engram_extraction.domain.validity import period_of


@dataclass(frozen=True)
class Source:
    """Who asserts the rows: one source item (a document, or an import source) of one tenant,
    and the model that read it when the LLM extractor did (as the endpoint reported it)."""

    tenant_id: str
    source_item: str
    default_type: str
    document_id: str | None = None
    document_version: str | None = None
    source_item_id: str | None = None
    key_field: str | None = None
    forced_type: str | None = None
    model: str | None = None
    edit: HumanEdit | None = None


FINGERPRINT_CHARS = 16


@dataclass(frozen=True)
class Draft:
    """A record as this source version asserts it, before revisions are decided."""

    record_id: str
    record_type: str
    entity_id: str
    attributes: dict[str, Scalar]
    content_sha256: str
    locator: str
    passage_ids: tuple[str, ...] = ()
    declared: Declared | None = None
    """The type definition the record was built with (None: the type is not declared)."""
    references: tuple[Reference, ...] = ()
    valid_from: datetime | None = None
    """When its values became true, from the field its type declares (None: not stated)."""
    valid_to: datetime | None = None

    @property
    def fingerprint(self) -> str:
        """What a new revision is decided on: the content, the passages it cites (a passage
        id names its version, so a new version's citations revise the record and its facts
        never cite a withdrawn passage) and the references it fills (so a type that gains a
        reference declaration revises its rows at their source's next version)."""
        if not self.passage_ids and not self.references:
            return self.content_sha256[:FINGERPRINT_CHARS]
        named = [r.model_dump_json() for r in self.references]
        cited = "\x1f".join([self.content_sha256, *self.passage_ids, *named])
        return hashlib.sha256(cited.encode()).hexdigest()[:FINGERPRINT_CHARS]


@dataclass(frozen=True)
class Rejection:
    """A candidate kept aside, with where it was and why."""

    locator: str
    reason: str
    attributes: dict[str, Scalar] = field(default_factory=dict)


@dataclass
class Built:
    """The drafts and the rejected candidates of one source version."""

    drafts: list[Draft] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)


def _key_of(
    attributes: dict[str, Scalar], id_fields: tuple[str, ...], fallback: str
) -> tuple[str | None, str | None]:
    """(key, problem): the id fields joined, or the fallback when no id field is declared."""
    if not id_fields:
        return fallback, None
    values = [attributes.get(name) for name in id_fields]
    missing = [name for name, value in zip(id_fields, values, strict=True) if value in (None, "")]
    if missing:
        return None, f"missing id field(s): {', '.join(missing)}"
    return entity_key("|".join(str(v) for v in values)), None


def build(candidates: list[Candidate], source: Source, registry: SchemaRegistry) -> Built:
    """Apply the schema (or the defaults), derive ids, and set duplicates and invalid rows aside."""
    built = Built()
    first_seen: dict[str, str] = {}
    drafted: dict[str, int] = {}
    for candidate in candidates:
        if candidate.problem:
            built.rejected.append(
                Rejection(candidate.locator, candidate.problem, candidate.attributes)
            )
            continue
        attributes = candidate.attributes
        raw_type = attributes.get("type")
        if source.forced_type:
            rtype = source.forced_type
        elif isinstance(raw_type, str) and raw_type.strip():
            rtype = type_name(raw_type)
        else:
            rtype = candidate.type_hint or source.default_type
        declared = registry.declaration(rtype)
        schema = declared.schema if declared else None
        digest = content_hash(rtype, attributes)
        if schema:
            missing = [f for f in schema.required_fields if attributes.get(f) in (None, "")]
            if missing:
                built.rejected.append(
                    Rejection(
                        candidate.locator,
                        f"missing required field(s): {', '.join(missing)}",
                        attributes,
                    )
                )
                continue
            id_fields = schema.id_fields
        elif source.key_field:
            id_fields = (source.key_field,)
        else:
            id_fields = ("id",) if attributes.get("id") not in (None, "") else ()
        key, problem = _key_of(attributes, id_fields, digest[:32])
        if key is None:
            built.rejected.append(Rejection(candidate.locator, problem or "no key", attributes))
            continue
        (valid_from, valid_to), problem = period_of(attributes, schema)
        if problem:
            built.rejected.append(Rejection(candidate.locator, problem, attributes))
            continue
        rid = record_id(source.tenant_id, source.source_item, rtype, key)
        if rid in drafted and _restates(built.drafts[drafted[rid]], digest, candidate):
            built.drafts[drafted[rid]] = _citing_also(built.drafts[drafted[rid]], candidate)
            continue
        if rid in first_seen:
            built.rejected.append(
                Rejection(
                    candidate.locator,
                    f"duplicate entity {entity_id(rtype, key)} (first at {first_seen[rid]})",
                    attributes,
                )
            )
            continue
        first_seen[rid] = candidate.locator
        drafted[rid] = len(built.drafts)
        built.drafts.append(
            Draft(
                rid,
                rtype,
                entity_id(rtype, key),
                attributes,
                digest,
                candidate.locator,
                candidate.passage_ids,
                declared,
                references_of(attributes, schema),
                valid_from,
                valid_to,
            )
        )
    return built


MAX_KEY = 200


def references_of(
    attributes: dict[str, Scalar], schema: RecordSchema | None
) -> tuple[Reference, ...]:
    """The declared reference fields a row fills, each with the entity ids its keys make (as the
    target's own records would key them); empty values and pieces name nothing."""
    if schema is None:
        return ()
    found: list[Reference] = []
    budget = MAX_REFERENCES
    for reference in schema.references:
        value = attributes.get(reference.field)
        if value is None or isinstance(value, bool) or budget <= 0:
            continue
        text = str(value)
        pieces = text.split(reference.separator) if reference.many else [text]
        keys = list(dict.fromkeys(p.strip() for p in pieces if p.strip()))[:budget]
        keys = [k for k in keys if len(k) <= MAX_KEY]
        if not keys:
            continue
        budget -= len(keys)
        targets = [
            ReferenceTarget(key=k, entity_id=entity_id(reference.to, entity_key(k))) for k in keys
        ]
        found.append(
            Reference(
                field=reference.field,
                predicate=reference.predicate,
                object_type=reference.to,
                many=reference.many,
                targets=targets,
            )
        )
    return tuple(found)


def _restates(first: Draft, digest: str, candidate: Candidate) -> bool:
    """A model's item saying exactly what an earlier one said, read from passages of its own: the
    same record asserted in two places, not a duplicate to set aside."""
    return bool(candidate.passage_ids) and first.content_sha256 == digest


def _citing_also(first: Draft, candidate: Candidate) -> Draft:
    """The record citing the restating item's passages too, after its own (at most
    `MAX_CITED_PASSAGES` in all)."""
    cited = tuple(dict.fromkeys((*first.passage_ids, *candidate.passage_ids)))
    return replace(first, passage_ids=cited[:MAX_CITED_PASSAGES])
