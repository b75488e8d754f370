"""Agent memories: read, list, count and delete, proxied to the memory service (recall has a
module of its own, `recall`).

Every route resolves the agent against the registry for the caller's tenant first (fail
closed: an unknown or foreign agent is 404 and the memory service is never called).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from engram_events.ids import Id
from engram_events.memory_filter import MemoryFilter
from engram_events.payloads.memories import MemoryType
from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.api.memory_proxy import AgentId, MemoryId, owned_agent, proxy
from engram_gateway.domain.model import Caller
from engram_gateway.ports import AgentRegistry
from engram_platform.problems import Problem

router = APIRouter(tags=["memories"])
Status = Literal["pending", "active", "superseded", "withdrawn", "rejected", "expired"]
Order = Literal["oldest", "recent"]
FILTER_HELP = (
    'JSON, the same object recall takes: {"user_id", "session_id", "type", "metadata": '
    '{KEY: VALUE | {"eq"|"in"|"gte"|"lte"|"exists": VALUE}}}'
)


def _filter(raw: str | None, user_id: str | None, session_id: str | None) -> dict[str, Any] | None:
    """The `filter` parameter (JSON) merged with the scalar scope parameters; a field named
    both ways with different values is a 422."""
    merged: dict[str, Any] = {}
    if raw is not None:
        try:
            merged = MemoryFilter.model_validate(json.loads(raw)).model_dump(
                exclude_none=True, by_alias=True
            )
        except (ValueError, ValidationError) as bad:
            errors = bad.errors() if isinstance(bad, ValidationError) else []
            raise Problem(
                422,
                detail="filter must be a JSON object of the recall filter's shape",
                errors=[
                    {"loc": ["query", "filter", *map(str, e["loc"])], "msg": e["msg"]}
                    for e in errors[:20]
                ],
            ) from None
    for name, value in (("user_id", user_id), ("session_id", session_id)):
        if value is None:
            continue
        if merged.get(name, value) != value:
            raise Problem(422, detail=f"{name} is given twice with different values")
        merged[name] = value
    return merged or None


FilterParam = Annotated[str | None, Query(max_length=2000, description=FILTER_HELP)]
"""Bounded so every parameter at its longest, percent-encoded, stays inside the 64 KB request
line the HTTP server parses (a longer line is refused before the app sees it)."""
ScopeParam = Annotated[Id | None, Query()]


def selection(
    search: Annotated[
        str | None, Query(max_length=500, description="a literal, case-insensitive substring")
    ] = None,
    type: Annotated[MemoryType | None, Query()] = None,
    status: Annotated[Status | None, Query()] = None,
    user_id: ScopeParam = None,
    session_id: ScopeParam = None,
    filter: FilterParam = None,
) -> dict[str, Any]:
    """Which memories a listing walks or a count counts (the memory service's body, less the
    agents)."""
    return {
        "search": search,
        "type": type,
        "status": status,
        "filter": _filter(filter, user_id, session_id),
    }


def paging(
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[
        str | None, Query(max_length=400, description="the `next_cursor` of the previous page")
    ] = None,
    order: Annotated[
        Order, Query(description="oldest first (default) or most recent first")
    ] = "oldest",
) -> dict[str, Any]:
    """Which page of a listing."""
    return {"limit": limit, "cursor": cursor, "order": order}


SelectionDep = Annotated[dict[str, Any], Depends(selection)]
PagingDep = Annotated[dict[str, Any], Depends(paging)]


@router.get("/v1/agents/{agent_id}/memories/{memory_id}")
async def get_memory(
    agent_id: AgentId,
    memory_id: MemoryId,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Status, provenance and timestamps; `pending` while only the gateway knows the write."""
    await owned_agent(registry, caller, agent_id)
    view = await deps.owned.view_or_pending(
        caller.tenant_id,
        service="memory",
        path=f"/internal/v1/agents/{agent_id}/memories/{memory_id}",
        kind="memory",
        item_id=memory_id,
        pending={"memory_id": memory_id, "agent_id": agent_id},
        agent_id=agent_id,
    )
    return JSONResponse(view)


@router.get("/v1/agents/{agent_id}/memories")
async def list_agent_memories(
    agent_id: AgentId,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
    selected: SelectionDep,
    page: PagingDep,
) -> JSONResponse:
    """One page of the agent's memories in a stable order; `next_cursor` fetches the next
    (null after the last). `search` is a literal substring, never a pattern."""
    await owned_agent(registry, caller, agent_id)
    body = {"agent_ids": [agent_id], **selected, **page}
    found = await proxy(deps, caller, "POST", "/internal/v1/memories/query", json=body)
    return JSONResponse(found)


@router.get("/v1/agents/{agent_id}/memories:count")
async def count_agent_memories(
    agent_id: AgentId,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
    selected: SelectionDep,
) -> JSONResponse:
    """How many memories the same listing walks: `{count, by_status, by_type}`."""
    await owned_agent(registry, caller, agent_id)
    body = {"agent_ids": [agent_id], **selected}
    found = await proxy(deps, caller, "POST", "/internal/v1/memories/count", json=body)
    return JSONResponse(found)


async def _owned_agents(registry: AgentRegistry, caller: Caller) -> list[str]:
    """The caller's own agents (the registry names them, never the caller)."""
    return [a.agent_id for a in await registry.list_agents(caller.tenant_id)]


@router.get("/v1/memories")
async def list_memories(
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
    selected: SelectionDep,
    page: PagingDep,
) -> JSONResponse:
    """One page of memories across the caller's own agents only."""
    agents = await _owned_agents(registry, caller)
    if not agents:
        return JSONResponse({"memories": [], "next_cursor": None})
    body = {"agent_ids": agents, **selected, **page}
    found = await proxy(deps, caller, "POST", "/internal/v1/memories/query", json=body)
    return JSONResponse(found)


@router.delete("/v1/agents/{agent_id}/memories/{memory_id}")
async def delete_memory(
    agent_id: AgentId,
    memory_id: MemoryId,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Withdraw one memory: its vector goes, its row keeps status and hashes; the tenant's
    memory quota gets it back."""
    await owned_agent(registry, caller, agent_id)
    path = f"/internal/v1/agents/{agent_id}/memories/{memory_id}"
    withdrawn = await proxy(deps, caller, "DELETE", path)
    await deps.intake.release(caller.tenant_id, "memory", memory_id)
    return JSONResponse(withdrawn)


@router.delete("/v1/agents/{agent_id}/memories")
async def clear_memories(
    agent_id: AgentId,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
    user_id: ScopeParam = None,
    session_id: ScopeParam = None,
) -> JSONResponse:
    """Withdraw every live memory of the agent, or only those of one user and/or session."""
    await owned_agent(registry, caller, agent_id)
    scope = {k: v for k, v in (("user_id", user_id), ("session_id", session_id)) if v}
    path = f"/internal/v1/agents/{agent_id}/memories"
    return JSONResponse(await proxy(deps, caller, "DELETE", path, params=scope))
