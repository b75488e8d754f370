"""Agent memories: write, read, list, delete and recall, proxied to the memory service.

Every route resolves the agent against the registry for the caller's tenant first (fail
closed: an unknown or foreign agent is 404 and the memory service is never called).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from engram_events import new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.ids import Attributes, Id
from engram_events.payloads.memories import MemoryType, MemoryWriteRequested
from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.publishing import publish_or_503
from engram_gateway.domain.model import Caller
from engram_gateway.domain.text import QueryText
from engram_platform.problems import Problem
from engram_platform.publish import publish_many_now, publish_now

router = APIRouter(tags=["memories"])
AgentId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
MemoryId = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]
Status = Literal["pending", "active", "superseded", "withdrawn", "rejected"]
LIST_PARAMS = frozenset({"search", "type", "status", "limit"})
PASSED_THROUGH = (200, 404, 409, 422)
MAX_BATCH = 100


class WriteMemory(BaseModel):
    """A memory to store; ids are scalars, never objects."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(max_length=64_000)
    type: MemoryType = "conversation"
    metadata: Attributes = Field(default_factory=dict)
    derived_from: list[Id] = Field(default_factory=list, max_length=100)
    supersedes: Id | None = None
    idempotency_key: Id | None = None


class WriteMemories(BaseModel):
    """Many memories of one agent in one request (the body stays under the 1 MiB JSON cap)."""

    model_config = ConfigDict(extra="forbid")

    memories: list[WriteMemory] = Field(min_length=1, max_length=MAX_BATCH)


class RecallQuery(BaseModel):
    """What to recall; `min_score` overrides the floor, `include_statuses` widens the statuses."""

    model_config = ConfigDict(extra="forbid")

    query: QueryText = Field(min_length=1, max_length=8000)
    top_k: int = Field(default=5, ge=1, le=100)
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    types: list[MemoryType] | None = Field(default=None, max_length=50)
    include_statuses: list[Literal["active", "superseded"]] | None = Field(
        default=None, max_length=2
    )


def memory_id_for(tenant_id: str, agent_id: str, idempotency_key: str | None) -> str:
    """A retried POST with the same idempotency key names the same memory."""
    if idempotency_key is None:
        return f"mem_{secrets.token_hex(16)}"
    seed = f"{tenant_id}\x1f{agent_id}\x1f{idempotency_key}".encode()
    return f"mem_{hashlib.sha256(seed).hexdigest()[:32]}"


async def _owned_agent(registry: Any, caller: Caller, agent_id: str) -> None:
    """404 unless the caller's tenant owns the agent; nothing else runs before this."""
    if await registry.get_agent(caller.tenant_id, agent_id) is None:
        raise Problem(404, detail="no such agent")


async def _proxy(request: Request, caller: Caller, method: str, path: str, **kw: Any) -> Any:
    """Call the memory service for the caller's tenant; its errors pass through as problems."""
    response = await request.app.state.internal.request(
        "memory", method, path, tenant_id=caller.tenant_id, **kw
    )
    if response.status_code not in PASSED_THROUGH:
        raise Problem(503, "service-unavailable", "the memory service could not answer")
    if response.status_code != 200:
        body = response.json()
        extra = {k: v for k, v in body.items() if k not in {"type", "title", "status", "detail"}}
        extra.pop("instance", None)
        kind = str(body.get("type", "")).rsplit("/", 1)[-1] or None
        raise Problem(response.status_code, kind, str(body.get("detail", "")), **extra)
    return response.json()


def _scalar_params(request: Request) -> None:
    """Known query parameters, each once: `type[$ne]=x` or a repeated `type` is a 422."""
    keys = list(request.query_params.keys())
    unknown = [k for k in keys if k not in LIST_PARAMS]
    repeated = [k for k in set(keys) if len(request.query_params.getlist(k)) > 1]
    if unknown or repeated:
        raise Problem(
            422, detail="query parameters must be search, type, status or limit, each one scalar"
        )


@router.post("/v1/agents/{agent_id}/memories", status_code=202)
async def write_memory(
    agent_id: AgentId, body: WriteMemory, request: Request, caller: CallerDep, registry: RegistryDep
) -> JSONResponse:
    """Queue the write (acks=all) and answer 202 with the id and its status URL."""
    await _owned_agent(registry, caller, agent_id)
    memory_id = memory_id_for(caller.tenant_id, agent_id, body.idempotency_key)
    payload = MemoryWriteRequested(memory_id=memory_id, agent_id=agent_id, **body.model_dump())
    event = new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id=caller.tenant_id)
    settings = request.app.state.settings
    await publish_or_503(
        publish_now(request.app.state.runtime.broker, event, topic_prefix=settings.topic_prefix),
        "the memory could not be queued; retry",
    )
    await request.app.state.submissions.record(
        caller.tenant_id, "memory", memory_id, agent_id=agent_id
    )
    return JSONResponse(_accepted(agent_id, memory_id), status_code=202)


@router.post("/v1/agents/{agent_id}/memories:batch", status_code=202)
async def write_memories(
    agent_id: AgentId,
    body: WriteMemories,
    request: Request,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Queue up to 100 writes with one publish (acks=all); 202 lists them in request order.

    All or nothing as far as the answer goes: a 503 may leave some queued, so a retry must
    send the same idempotency keys (the client library sets them) to write each memory once.
    """
    await _owned_agent(registry, caller, agent_id)
    keys = [m.idempotency_key for m in body.memories if m.idempotency_key is not None]
    if len(set(keys)) != len(keys):
        raise Problem(422, detail="idempotency keys must differ within one batch")
    tenant_id = caller.tenant_id
    batch = [
        new_event(
            MEMORY_WRITE_REQUESTED,
            MemoryWriteRequested(
                memory_id=memory_id_for(tenant_id, agent_id, m.idempotency_key),
                agent_id=agent_id,
                **m.model_dump(),
            ),
            tenant_id=tenant_id,
        )
        for m in body.memories
    ]
    settings = request.app.state.settings
    await publish_or_503(
        publish_many_now(
            request.app.state.runtime.broker, batch, topic_prefix=settings.topic_prefix
        ),
        "the memories could not be queued; retry the batch",
    )
    ids = [e.payload.memory_id for e in batch]
    await request.app.state.submissions.record_many(
        tenant_id, "memory", [(m, {"agent_id": agent_id}) for m in ids]
    )
    return JSONResponse({"memories": [_accepted(agent_id, m) for m in ids]}, status_code=202)


def _accepted(agent_id: str, memory_id: str) -> dict[str, str]:
    """What a 202 says of one queued write: its id, status and where to watch it."""
    return {
        "memory_id": memory_id,
        "status": "pending",
        "status_url": f"/v1/agents/{agent_id}/memories/{memory_id}",
    }


@router.get("/v1/agents/{agent_id}/memories/{memory_id}")
async def get_memory(
    agent_id: AgentId,
    memory_id: MemoryId,
    request: Request,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Status, provenance and timestamps; `pending` while only the gateway knows the write."""
    await _owned_agent(registry, caller, agent_id)
    path = f"/internal/v1/agents/{agent_id}/memories/{memory_id}"
    response = await request.app.state.internal.request(
        "memory", "GET", path, tenant_id=caller.tenant_id
    )
    if response.status_code == 200:
        return JSONResponse(response.json())
    if response.status_code != 404:
        raise Problem(503, "service-unavailable", "the memory service could not answer")
    submitted = await request.app.state.submissions.get(caller.tenant_id, "memory", memory_id)
    if submitted is None or submitted.get("agent_id") != agent_id:
        raise Problem(404, detail="no such memory")
    return JSONResponse({"memory_id": memory_id, "agent_id": agent_id, "status": "pending"})


@router.get("/v1/agents/{agent_id}/memories")
async def list_agent_memories(
    agent_id: AgentId,
    request: Request,
    caller: CallerDep,
    registry: RegistryDep,
    search: Annotated[str | None, Query(max_length=500)] = None,
    type: Annotated[MemoryType | None, Query()] = None,
    status: Annotated[Status | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> JSONResponse:
    """The agent's memories; `search` is a literal substring, never a pattern."""
    _scalar_params(request)
    await _owned_agent(registry, caller, agent_id)
    params = {"search": search, "type": type, "status": status, "limit": limit}
    found = await _proxy(
        request,
        caller,
        "GET",
        f"/internal/v1/agents/{agent_id}/memories",
        params={k: v for k, v in params.items() if v is not None},
    )
    return JSONResponse(found)


@router.get("/v1/memories")
async def list_memories(
    request: Request,
    caller: CallerDep,
    registry: RegistryDep,
    search: Annotated[str | None, Query(max_length=500)] = None,
    type: Annotated[MemoryType | None, Query()] = None,
    status: Annotated[Status | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> JSONResponse:
    """Memories across the caller's own agents only (the registry names them, not the caller)."""
    _scalar_params(request)
    agents = [a.agent_id for a in await registry.list_agents(caller.tenant_id)]
    if not agents:
        return JSONResponse({"memories": []})
    body = {"agent_ids": agents, "search": search, "type": type, "status": status, "limit": limit}
    found = await _proxy(request, caller, "POST", "/internal/v1/memories/query", json=body)
    return JSONResponse(found)


@router.delete("/v1/agents/{agent_id}/memories/{memory_id}")
async def delete_memory(
    agent_id: AgentId,
    memory_id: MemoryId,
    request: Request,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Withdraw one memory: its vector goes, its row keeps status and hashes."""
    await _owned_agent(registry, caller, agent_id)
    path = f"/internal/v1/agents/{agent_id}/memories/{memory_id}"
    return JSONResponse(await _proxy(request, caller, "DELETE", path))


@router.delete("/v1/agents/{agent_id}/memories")
async def clear_memories(
    agent_id: AgentId, request: Request, caller: CallerDep, registry: RegistryDep
) -> JSONResponse:
    """Withdraw every memory of the agent."""
    await _owned_agent(registry, caller, agent_id)
    path = f"/internal/v1/agents/{agent_id}/memories"
    return JSONResponse(await _proxy(request, caller, "DELETE", path))


@router.post("/v1/agents/{agent_id}/recall")
async def recall(
    agent_id: AgentId, body: RecallQuery, request: Request, caller: CallerDep, registry: RegistryDep
) -> JSONResponse:
    """Recall by meaning within the agent; the floor is applied and its drops reported."""
    await _owned_agent(registry, caller, agent_id)
    path = f"/internal/v1/agents/{agent_id}/recall"
    found = await _proxy(request, caller, "POST", path, json=body.model_dump(exclude_none=True))
    return JSONResponse(found)
