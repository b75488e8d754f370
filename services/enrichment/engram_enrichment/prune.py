"""Proof for prune jobs: nothing live here still rests on a tombstoned record or fact."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from engram_enrichment.domain.model import Entity
from engram_enrichment.domain.sections import current_sections
from engram_enrichment.knowledge import KnowledgeBase
from engram_enrichment.section_vectors import SectionVectors
from engram_platform.internal import TenantDep

router = APIRouter(prefix="/internal/v1/prune", tags=["internal"])
Ids = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=512)]], Field(max_length=100_000)
]


class VerifyBody(BaseModel):
    """The ids a prune job tombstoned, by kind."""

    model_config = ConfigDict(extra="ignore")

    records: Ids = Field(default_factory=list)
    facts: Ids = Field(default_factory=list)


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


async def facts_resting_on_records(kb: KnowledgeBase, tenant_id: str, record_ids: list[str]) -> int:
    """Non-withdrawn facts whose support still names one of the records."""
    wanted = set(record_ids)
    return sum(facts_citing(e, wanted) for e in await kb.entities_of_records(tenant_id, record_ids))


def _facts_by_entity(fact_ids: list[str]) -> dict[str, set[str]]:
    """Fact ids grouped by the entity their id names."""
    by_entity: dict[str, set[str]] = {}
    for fact_id in set(fact_ids):
        by_entity.setdefault(fact_id.rsplit(":", 2)[0], set()).add(fact_id)
    return by_entity


async def facts_still_standing(
    kb: KnowledgeBase, tenant_id: str, fact_ids: list[str], loaded: Sequence[Entity] = ()
) -> int:
    """Of the given facts, those not withdrawn; entities already `loaded` are not read again."""
    by_entity = _facts_by_entity(fact_ids)
    known = {entity.entity_id for entity in loaded}
    others = await kb.load_many(tenant_id, sorted(set(by_entity) - known))
    return sum(
        1
        for entity in [*loaded, *others]
        for f in by_entity.get(entity.entity_id, ())
        if f in entity.facts and entity.facts[f].status != "withdrawn"
    )


@router.post("/verify")
async def verify_prune(body: VerifyBody, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """How many live facts, article sections and section vectors still cite tombstoned ids."""
    kb: KnowledgeBase = request.app.state.knowledge
    sections: SectionVectors | None = getattr(request.app.state, "section_vectors", None)
    wanted = set(body.records)
    entities = await kb.entities_of_records(tenant_id, body.records)
    section_vectors = 0
    if sections is not None:
        section_vectors = len(await sections.citing_many(tenant_id, entities, body.records))
    return {
        "references": {
            "records": sum(facts_citing(e, wanted) for e in entities),
            "facts": await facts_still_standing(kb, tenant_id, body.facts, loaded=entities),
            "article_sections": sum(sections_citing(e, wanted) for e in entities),
            "section_vectors": section_vectors,
        }
    }
