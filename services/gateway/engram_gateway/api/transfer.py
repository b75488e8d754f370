"""`GET /v1/export` and `POST /v1/import`: a tenant's agents, retention rules, memories,
documents' metadata and records as versioned NDJSON, and that file restored into the caller's
tenant (admin keys only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse

from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.api.memory_proxy import owned_agent
from engram_gateway.domain.access import ADMIN
from engram_gateway.domain.model import Caller
from engram_platform.problems import Problem

router = APIRouter(tags=["transfer"])
MEDIA_TYPE = "application/x-ndjson"
MAX_IMPORT_BYTES = 512 * 1024 * 1024
"""An export of 10k memories is a few MB; this leaves room for a large tenant's."""


async def admin(caller: CallerDep) -> Caller:
    """The caller, when its key has the `admin` role: a whole tenant's data leaves or arrives."""
    if ADMIN not in caller.roles:
        raise Problem(403, detail="export and import need a key with the 'admin' role")
    return caller


AdminDep = Annotated[Caller, Depends(admin)]


@router.get("/v1/export", response_class=StreamingResponse)
async def export_tenant(
    deps: Deps,
    caller: AdminDep,
    registry: RegistryDep,
    agent_id: Annotated[
        str | None,
        Query(max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="one agent only"),
    ] = None,
    knowledge: Annotated[
        bool,
        Query(description="the documents' metadata and records too (never for one agent)"),
    ] = True,
    vectors: Annotated[
        bool,
        Query(description="each memory's stored vector (an import by the same embedder keeps it)"),
    ] = False,
) -> StreamingResponse:
    """The tenant's export as NDJSON: a manifest line, the agents with their retention rules
    and memories (active, superseded, expired), the documents' metadata and live records (not
    for one agent), and a last line with the sha256 of every line before it."""
    if agent_id is not None:
        await owned_agent(registry, caller, agent_id)
    agents = await registry.list_agents(caller.tenant_id)
    if agent_id is not None:
        agents = [a for a in agents if a.agent_id == agent_id]
    plan = await deps.tenant_export.plan(
        caller.tenant_id, agents, knowledge=knowledge and agent_id is None, vectors=vectors
    )
    target = {} if agent_id is None else {"agent_id": agent_id}
    counts = {"agents": len(plan.agents), "memories": plan.memories}
    await deps.audit.record(caller, "export.started", target, counts=counts)
    return StreamingResponse(deps.tenant_export.stream(plan), media_type=MEDIA_TYPE)


NDJSON_BODY = {
    "requestBody": {
        "required": True,
        "content": {MEDIA_TYPE: {"schema": {"type": "string", "format": "binary"}}},
    }
}


@router.post("/v1/import", openapi_extra=NDJSON_BODY)
async def import_tenant(request: Request, deps: Deps, caller: AdminDep) -> JSONResponse:
    """Restore an export into the caller's tenant: the file is checked whole first (422 naming
    the line and what is wrong), then agents and memories get new ids derived from the source,
    so running it again writes nothing twice and finishes what a cut run left."""
    report = await deps.tenant_import.run(caller, request.stream())
    return JSONResponse(report.answer())
