"""An agent's retention rules: read and replaced through the API, applied by the memory service.

The agent is resolved for the caller's tenant first (an unknown or foreign agent is 404 and the
memory service is never called); the body is checked here and again by the memory service.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from engram_events.retention import AgentRetention
from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.api.memory_proxy import AgentId, owned_agent, proxy

router = APIRouter(tags=["memories"])


@router.get("/v1/agents/{agent_id}/retention")
async def get_retention(
    agent_id: AgentId, deps: Deps, caller: CallerDep, registry: RegistryDep
) -> JSONResponse:
    """`{agent_id, rules, defaults}`: the agent's own rules, and the deployment's defaults
    for the types it set none for."""
    await owned_agent(registry, caller, agent_id)
    path = f"/internal/v1/agents/{agent_id}/retention"
    return JSONResponse(await proxy(deps, caller, "GET", path))


@router.put("/v1/agents/{agent_id}/retention")
async def set_retention(
    agent_id: AgentId,
    body: AgentRetention,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Replace the agent's own rules (one per type: `max_count` and/or `max_age_seconds`);
    `{"rules": []}` returns the agent to the defaults. Answers as GET does."""
    await owned_agent(registry, caller, agent_id)
    path = f"/internal/v1/agents/{agent_id}/retention"
    found = await proxy(deps, caller, "PUT", path, json=body.model_dump())
    counts = {"rules": len(body.rules)}
    await deps.audit.record(caller, "retention.set", {"agent_id": agent_id}, counts=counts)
    return JSONResponse(found)
