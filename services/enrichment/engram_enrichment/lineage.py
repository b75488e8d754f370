"""Lineage from the knowledge side: which facts rest on which records, and back."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from engram_enrichment.knowledge import KnowledgeBase
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1/lineage", tags=["internal"])


class RecordIds(BaseModel):
    """Records whose derived facts are wanted."""

    model_config = ConfigDict(extra="ignore")

    records: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(max_length=10_000)


def _fact_summary(entity_id: str, fact: Any) -> dict[str, Any]:
    """Ids, status and support: enough to follow lineage, no values."""
    return {
        "fact_id": fact.fact_id,
        "entity_id": entity_id,
        "attribute": fact.attribute,
        "status": fact.status,
        "support": [s.record_id for s in fact.support],
    }


@router.post("/facts")
async def facts_from_records(
    body: RecordIds, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """Facts (any status) whose support names one of the records."""
    kb: KnowledgeBase = request.app.state.knowledge
    wanted = set(body.records)
    found: list[dict[str, Any]] = []
    for entity in await kb.entities_of_records(tenant_id, sorted(wanted)):
        found.extend(
            _fact_summary(entity.entity_id, fact)
            for fact in entity.facts.values()
            if any(s.record_id in wanted for s in fact.support)
        )
    return {"facts": found}


@router.get("/facts/{fact_id:path}")
async def fact_sources(
    fact_id: Annotated[str, Path(min_length=3, max_length=512)],
    request: Request,
    tenant_id: TenantDep,
) -> dict[str, Any]:
    """What one fact rests on: its supporting records."""
    kb: KnowledgeBase = request.app.state.knowledge
    entity_id = fact_id.rsplit(":", 2)[0]
    entity = await kb.load(tenant_id, entity_id)
    fact = entity.facts.get(fact_id) if entity else None
    if fact is None:
        raise Problem(404, detail="no such fact")
    return _fact_summary(entity_id, fact)
