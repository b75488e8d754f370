"""Proof for prune jobs: nothing live here still rests on a tombstoned record or fact."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from engram_enrichment.knowledge import KnowledgeBase
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


async def facts_resting_on_records(kb: KnowledgeBase, tenant_id: str, record_ids: list[str]) -> int:
    """Non-withdrawn facts whose support still names one of the records."""
    wanted = set(record_ids)
    entity_ids = {await kb.store.entity_of_record(tenant_id, r) for r in wanted}
    count = 0
    for entity_id in sorted(e for e in entity_ids if e):
        entity = await kb.load(tenant_id, entity_id)
        if entity is None:
            continue
        count += sum(
            1
            for fact in entity.facts.values()
            if fact.status != "withdrawn" and any(s.record_id in wanted for s in fact.support)
        )
    return count


async def facts_still_standing(kb: KnowledgeBase, tenant_id: str, fact_ids: list[str]) -> int:
    """Of the given facts, those not withdrawn."""
    by_entity: dict[str, set[str]] = {}
    for fact_id in set(fact_ids):
        by_entity.setdefault(fact_id.rsplit(":", 2)[0], set()).add(fact_id)
    count = 0
    for entity_id, wanted in sorted(by_entity.items()):
        entity = await kb.load(tenant_id, entity_id)
        if entity is not None:
            count += sum(
                1 for f in wanted if f in entity.facts and entity.facts[f].status != "withdrawn"
            )
    return count


@router.post("/verify")
async def verify_prune(body: VerifyBody, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """How many live facts still rest on each kind of tombstoned id (0 means clean)."""
    kb: KnowledgeBase = request.app.state.knowledge
    return {
        "references": {
            "records": await facts_resting_on_records(kb, tenant_id, body.records),
            "facts": await facts_still_standing(kb, tenant_id, body.facts),
        }
    }
