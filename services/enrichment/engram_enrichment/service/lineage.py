"""Lineage from the knowledge side: which facts rest on which records, and back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram_enrichment.domain.model import Fact
from engram_enrichment.service.knowledge import KnowledgeBase


class NoSuchFact(LookupError):
    """The fact id names no fact of a stored entity."""


def fact_summary(entity_id: str, fact: Fact) -> dict[str, Any]:
    """Ids, status and support: enough to follow lineage, no values."""
    return {
        "fact_id": fact.fact_id,
        "entity_id": entity_id,
        "attribute": fact.attribute,
        "status": fact.status,
        "support": [s.record_id for s in fact.support],
    }


async def facts_resting_on(
    kb: KnowledgeBase, tenant_id: str, records: Sequence[str]
) -> list[dict[str, Any]]:
    """Facts (any status) whose support names one of the records."""
    wanted = set(records)
    found: list[dict[str, Any]] = []
    for entity in await kb.entities_of_records(tenant_id, sorted(wanted)):
        found.extend(
            fact_summary(entity.entity_id, fact)
            for fact in entity.facts.values()
            if any(s.record_id in wanted for s in fact.support)
        )
    return found


async def support_of_fact(kb: KnowledgeBase, tenant_id: str, fact_id: str) -> dict[str, Any]:
    """What one fact rests on: its supporting records (NoSuchFact when there is none)."""
    entity_id = fact_id.rsplit(":", 2)[0]
    entity = await kb.load(tenant_id, entity_id)
    fact = entity.facts.get(fact_id) if entity else None
    if fact is None:
        raise NoSuchFact(fact_id)
    return fact_summary(entity_id, fact)


async def known_facts(kb: KnowledgeBase, tenant_id: str, fact_ids: Sequence[str]) -> set[str]:
    """Which of these fact ids (`entity:attribute:hash`) the tenant's entities hold, in any
    status: one read of the entities they name."""
    entity_ids = sorted({f.rsplit(":", 2)[0] for f in fact_ids if f.count(":") >= 2})
    wanted = set(fact_ids)
    entities = await kb.load_many(tenant_id, entity_ids) if entity_ids else []
    return {fact for entity in entities for fact in entity.facts if fact in wanted}
