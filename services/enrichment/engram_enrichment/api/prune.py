"""Prune verification for the gateway: how much still rests on tombstoned ids."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from engram_enrichment.api.dependencies import Deps
from engram_enrichment.service.verify import references
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
    documents: Ids = Field(default_factory=list, max_length=1000)


@router.post("/verify")
async def verify_prune(body: VerifyBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """How many live facts, article sections and section vectors still cite tombstoned ids,
    and how many passage rows and vectors deleted documents still have."""
    found = await references(deps.knowledge, deps.sections, tenant_id, body.records, body.facts)
    found["passages"] = (
        await deps.passages.count_of_documents(tenant_id, body.documents) if deps.passages else 0
    )
    found["passage_vectors"] = (
        await deps.vectors.count_passages_of(tenant_id, body.documents) if deps.vectors else 0
    )
    return {"references": found}
