"""Moving the knowledge store to another embedder, for the gateway's `/v1/ops/reindex`."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter

from engram_embedders.reindex import Refused, ReindexTarget
from engram_enrichment.api.dependencies import Deps
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem

log = logging.getLogger(__name__)
router = APIRouter(prefix="/internal/v1/knowledge", tags=["internal"])


@router.post("/reindex")
async def start_reindex(body: ReindexTarget, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Start moving the knowledge store to another embedder; 409 while one runs or for the same
    space, 409 `recall-disabled` without knowledge search."""
    if deps.reindex is None:
        raise Problem(409, "recall-disabled", "knowledge search is not enabled on this service")
    try:
        job = await deps.reindex.start(body.embedder, body.hashing_dimension)
    except Refused as refused:
        raise Problem(refused.status, refused.kind, str(refused)) from None
    log.info(
        "knowledge reindex requested", extra={"tenant_id": tenant_id, "embedder": body.embedder}
    )
    return job.view(datetime.now(UTC))


@router.get("/reindex")
async def reindex_progress(deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """The latest reindex's state, done/total, rate and eta (state `none`: never run)."""
    progress = None if deps.reindex is None else deps.reindex.progress()
    return progress or {"state": "none"}
