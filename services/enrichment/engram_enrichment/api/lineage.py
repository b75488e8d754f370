"""Lineage for the gateway: which facts rest on which records, and back."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from engram_enrichment.api.dependencies import Deps
from engram_enrichment.service.lineage import NoSuchFact, facts_resting_on, support_of_fact
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1/lineage", tags=["internal"])


class RecordIds(BaseModel):
    """Records whose derived facts are wanted."""

    model_config = ConfigDict(extra="ignore")

    records: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(max_length=10_000)


@router.post("/facts")
async def facts_from_records(body: RecordIds, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Facts (any status) whose support names one of the records."""
    return {"facts": await facts_resting_on(deps.knowledge, tenant_id, body.records)}


@router.get("/facts/{fact_id:path}")
async def fact_sources(
    fact_id: Annotated[str, Path(min_length=3, max_length=512)],
    deps: Deps,
    tenant_id: TenantDep,
) -> dict[str, Any]:
    """What one fact rests on: its supporting records."""
    try:
        return await support_of_fact(deps.knowledge, tenant_id, fact_id)
    except NoSuchFact:
        raise Problem(404, detail="no such fact") from None
