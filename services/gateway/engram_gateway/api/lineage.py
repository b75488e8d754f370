"""`/v1/lineage/{id}`: what a document or record derives, and what a fact or memory derives from."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps

router = APIRouter(tags=["lineage"])
LineageId = Annotated[
    str, Path(min_length=3, max_length=512, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$")
]


@router.get("/v1/lineage/{item_id:path}")
async def lineage(item_id: LineageId, deps: Deps, caller: CallerDep) -> dict[str, Any]:
    """Follow lineage edges from one id; 404 when no owning service knows it for this tenant."""
    return await deps.lineage.follow(caller.tenant_id, item_id)
