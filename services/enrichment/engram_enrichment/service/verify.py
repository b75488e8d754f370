"""Proof for prune jobs: nothing live here still rests on a tombstoned record or fact."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram_enrichment.domain.model import Entity
from engram_enrichment.domain.relations import supported_by
from engram_enrichment.domain.sections import current_sections
from engram_enrichment.domain.stored import from_document
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.section_vectors import SectionVectors


def facts_citing(entity: Entity, wanted: set[str]) -> int:
    """Non-withdrawn facts whose support still names one of the records."""
    return sum(
        1
        for fact in entity.facts.values()
        if fact.status != "withdrawn" and any(s.record_id in wanted for s in fact.support)
    )


def sections_citing(entity: Entity, wanted: set[str]) -> int:
    """Active article sections, as stored and as the facts render them now, citing a record."""
    stored = [s for s in entity.sections.values() if s.status == "active"]
    citing = {
        section.section_id
        for section in [*stored, *current_sections(entity).values()]
        if wanted.intersection(section.record_ids)
    }
    return len(citing)


def names_a_record(doc: dict[str, Any], wanted: set[str]) -> bool:
    """Whether a stored entity names one of the records in a non-withdrawn fact's support or an
    active stored section. Sections rendered now cite only non-withdrawn facts' records, so an
    entity that names none cites none, and needs no model built to say so."""
    return any(
        fact["status"] != "withdrawn"
        and any(support["record_id"] in wanted for support in fact["support"])
        for fact in doc["facts"]
    ) or any(
        section["status"] == "active" and not wanted.isdisjoint(section["record_ids"])
        for section in doc["sections"]
    )


def _standing(doc: dict[str, Any], fact_ids: set[str]) -> int:
    """Of the given facts, those a stored entity holds and has not withdrawn."""
    return sum(
        1 for fact in doc["facts"] if fact["fact_id"] in fact_ids and fact["status"] != "withdrawn"
    )


def _entity_of_fact(fact_id: str) -> str:
    """The entity a fact id names."""
    return fact_id.rsplit(":", 2)[0]


async def facts_still_standing(
    kb: KnowledgeBase,
    tenant_id: str,
    fact_ids: list[str],
    stored: Mapping[str, dict[str, Any]] | None = None,
) -> int:
    """Of the given facts, those not withdrawn; entities already in `stored` are not read again."""
    wanted = set(fact_ids)
    entity_ids = {_entity_of_fact(f) for f in wanted}
    known = dict(stored or {})
    known.update(await kb.stored_many(tenant_id, sorted(entity_ids - set(known))))
    return sum(_standing(known[e], wanted) for e in entity_ids if e in known)


VERIFY_CHUNK = 1000
MAX_ROWS = 1_000_000


async def relations_citing(
    kb: KnowledgeBase, tenant_id: str, subjects: list[str], wanted: set[str]
) -> int:
    """Relation rows of these subjects whose support still names one of the records."""
    if kb.relations is None:
        return 0
    found = 0
    for start in range(0, len(subjects), VERIFY_CHUNK):
        chunk = subjects[start : start + VERIFY_CHUNK]
        rows = await kb.relations.touching(tenant_id, chunk, "subject", None, MAX_ROWS)
        found += supported_by(rows, wanted)
    return found


async def references(
    kb: KnowledgeBase,
    sections: SectionVectors | None,
    tenant_id: str,
    records: list[str],
    facts: list[str],
) -> dict[str, int]:
    """How many live facts, relations, article sections and section vectors still cite the
    records, and how many of the facts still stand. Models are built only for entities that
    name a record."""
    wanted = set(records)
    stored = await kb.stored_of_records(tenant_id, records)
    named = [from_document(doc) for doc in stored.values() if names_a_record(doc, wanted)]
    section_vectors = 0
    if sections is not None:
        section_ids = sorted({s["section_id"] for doc in stored.values() for s in doc["sections"]})
        section_vectors = len(await sections.citing_many(tenant_id, section_ids, records))
    return {
        "records": sum(facts_citing(e, wanted) for e in named),
        "facts": await facts_still_standing(kb, tenant_id, facts, stored),
        "relations": await relations_citing(kb, tenant_id, sorted(stored), wanted),
        "article_sections": sum(sections_citing(e, wanted) for e in named),
        "section_vectors": section_vectors,
    }
