"""The memory service's internal HTTP API, called by the gateway with the caller's tenant."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel, ConfigDict, Field

from engram_events.ids import Id
from engram_events.payloads.memories import MemoryType
from engram_memory.recall import EmbedderMismatch
from engram_memory.views import memory_view
from engram_memory.withdrawal import LIVE_STATUSES
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1", tags=["internal"])
AgentPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
MemoryPath = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]
Status = Literal["pending", "active", "superseded", "withdrawn", "rejected"]
RecallStatus = Literal["active", "superseded"]


class RecallBody(BaseModel):
    """A recall query: scalars and lists of scalars only."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=8000)
    top_k: int = Field(default=5, ge=1, le=100)
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    types: list[MemoryType] | None = Field(default=None, max_length=50)
    include_statuses: list[RecallStatus] | None = Field(default=None, max_length=2)


class ListBody(BaseModel):
    """A listing across several of the tenant's agents (the gateway names only owned ones)."""

    model_config = ConfigDict(extra="forbid")

    agent_ids: list[Id] = Field(max_length=1000)
    search: str | None = Field(default=None, max_length=500)
    type: MemoryType | None = None
    status: Status | None = None
    limit: int = Field(default=100, ge=1, le=1000)


class VerifyBody(BaseModel):
    """Ids a prune job tombstoned; the answer counts live memories still derived from them."""

    records: list[Id] = Field(default_factory=list)
    facts: list[Id] = Field(default_factory=list)
    documents: list[Id] = Field(default_factory=list)


def _state(request: Request) -> Any:
    return request.app.state


@router.post("/agents/{agent_id}/recall")
async def recall(
    agent_id: AgentPath, body: RecallBody, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """Top-k within the agent, floored; 409 when the query embedder is not the collection's."""
    try:
        found = await _state(request).recall.recall(
            tenant_id,
            agent_id,
            body.query,
            body.top_k,
            min_score=body.min_score,
            types=body.types,
            statuses=body.include_statuses,
        )
    except EmbedderMismatch as exc:
        raise Problem(
            409,
            "embedder-mismatch",
            "the query embedder differs from the embedder of the stored vectors",
            collection_fingerprint=exc.collection,
            query_fingerprint=exc.query,
        ) from None
    return jsonable_encoder(
        {
            "results": found.results,
            "floor": found.floor,
            "dropped_below_floor": found.dropped_below_floor,
        }
    )


@router.get("/agents/{agent_id}/memories/{memory_id}")
async def get_memory(
    agent_id: AgentPath, memory_id: MemoryPath, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """One memory of the agent, with status and provenance."""
    row = await _state(request).rows.get(tenant_id, memory_id)
    if row is None or row["agent_id"] != agent_id:
        raise Problem(404, detail="no such memory")
    return jsonable_encoder(memory_view(row))


async def _list(request: Request, tenant_id: str, body: ListBody) -> list[dict[str, Any]]:
    """Rows of the named agents, filtered; the search is a literal, case-insensitive substring."""
    if not body.agent_ids:
        return []
    selection: dict[str, Any] = {"tenant_id": tenant_id, "agent_id": list(body.agent_ids)}
    if body.type:
        selection["type"] = body.type
    if body.status:
        selection["status"] = body.status
    rows = await _state(request).rows.select(selection)
    if body.search:
        needle = body.search.casefold()
        rows = [row for row in rows if needle in str(row.get("content") or "").casefold()]
    return [memory_view(row) for row in rows[: body.limit]]


@router.get("/agents/{agent_id}/memories")
async def list_agent_memories(
    agent_id: AgentPath,
    request: Request,
    tenant_id: TenantDep,
    search: Annotated[str | None, Query(max_length=500)] = None,
    type: Annotated[MemoryType | None, Query()] = None,
    status: Annotated[Status | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """The agent's memories, oldest first."""
    body = ListBody(agent_ids=[agent_id], search=search, type=type, status=status, limit=limit)
    return jsonable_encoder({"memories": await _list(request, tenant_id, body)})


@router.post("/memories/query")
async def list_memories(body: ListBody, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """Memories across the agents the gateway named (it names only the caller's own)."""
    return jsonable_encoder({"memories": await _list(request, tenant_id, body)})


@router.delete("/agents/{agent_id}/memories/{memory_id}")
async def delete_memory(
    agent_id: AgentPath, memory_id: MemoryPath, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """Withdraw one memory: its vector goes, its row keeps status and hashes."""
    state = _state(request)
    row = await state.rows.get(tenant_id, memory_id)
    if row is None or row["agent_id"] != agent_id:
        raise Problem(404, detail="no such memory")
    await state.withdrawals.on_request(state.outbox, tenant_id, [row], "deleted")
    return {"memory_id": memory_id, "status": "withdrawn"}


@router.delete("/agents/{agent_id}/memories")
async def clear_agent(
    agent_id: AgentPath, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """Withdraw every live memory of the agent."""
    state = _state(request)
    rows = await state.rows.select(
        {"tenant_id": tenant_id, "agent_id": agent_id, "status": list(LIVE_STATUSES)}
    )
    done = await state.withdrawals.on_request(state.outbox, tenant_id, rows, "deleted")
    return {"agent_id": agent_id, "withdrawn": len(done)}


@router.post("/prune/verify")
async def verify_prune(body: VerifyBody, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """How many live memories still derive from each kind of tombstoned id (0 means clean)."""
    rows = _state(request).rows
    references = {}
    for kind, ids in (
        ("records", body.records),
        ("facts", body.facts),
        ("documents", body.documents),
    ):
        references[kind] = (
            await rows.count_derived_from(tenant_id, ids, LIVE_STATUSES) if ids else 0
        )
    return {"references": references}


class LineageBody(BaseModel):
    """Source ids (documents, records, facts) whose derived memories are wanted."""

    model_config = ConfigDict(extra="ignore")

    ids: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(max_length=10_000)


@router.post("/lineage/derived")
async def derived_memories(
    body: LineageBody, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """Memories (any status) whose `derived_from` names one of the ids."""
    rows = await _state(request).rows.derived_from_any(
        tenant_id, body.ids, ["pending", "active", "superseded", "withdrawn", "rejected"]
    )
    return {
        "memories": [
            {
                "memory_id": row["memory_id"],
                "agent_id": row["agent_id"],
                "status": row.get("status"),
                "derived_from": row.get("derived_from", []),
            }
            for row in rows
        ]
    }


@router.get("/lineage/memories/{memory_id}")
async def memory_sources(
    memory_id: MemoryPath, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """What a memory derives from."""
    row = await _state(request).rows.get(tenant_id, memory_id)
    if row is None:
        raise Problem(404, detail="no such memory")
    return {
        "memory_id": memory_id,
        "agent_id": row["agent_id"],
        "status": row.get("status"),
        "derived_from": row.get("derived_from", []),
    }
