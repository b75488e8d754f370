"""Which fact ids are the tenant's, for the gateway's check of a write's `derived_from`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from engram_enrichment.api.dependencies import Deps
from engram_enrichment.service.lineage import known_facts
from engram_platform.internal import KNOWN_PATH, KnownIds, TenantDep

router = APIRouter(tags=["internal"])


@router.post(KNOWN_PATH)
async def known(body: KnownIds, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """The ids among these that name one of the tenant's facts (any status)."""
    return {"known": sorted(await known_facts(deps.knowledge, tenant_id, body.ids))}
