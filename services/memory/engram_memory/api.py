"""The memory service's internal HTTP API, called by the gateway with the caller's tenant."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel, ConfigDict, Field

from engram_events.ids import Id
from engram_events.memory_filter import MemoryFilter
from engram_events.payloads.memories import MemoryType
from engram_memory.dedup import Candidate
from engram_memory.domain.listing import BadCursor, Order, decode_cursor, encode_cursor
from engram_memory.domain.selection import Selection
from engram_memory.recall import EmbedderMismatch, LexicalOff
from engram_memory.views import conversation_memory_ids, conversation_view, memory_view
from engram_memory.withdrawal import LIVE_STATUSES
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem
from engram_vectors.ranking import Mode

router = APIRouter(prefix="/internal/v1", tags=["internal"])
AgentPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
MemoryPath = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]
Status = Literal["pending", "active", "superseded", "withdrawn", "rejected"]
RecallStatus = Literal["active", "superseded"]


class RecallBody(BaseModel):
    """A recall query: scalars, lists of scalars and the validated filter only."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=8000)
    top_k: int = Field(default=5, ge=1, le=100)
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    types: list[MemoryType] | None = Field(default=None, max_length=50)
    include_statuses: list[RecallStatus] | None = Field(default=None, max_length=2)
    mode: Mode = "hybrid"
    filter: MemoryFilter | None = None
    recency_half_life_days: float | None = Field(default=None, gt=0, le=36_500)


class ListBody(BaseModel):
    """A listing (or count) across some of the tenant's agents (the gateway names only owned
    ones): one page of at most `limit` rows after `cursor`, in `order`."""

    model_config = ConfigDict(extra="forbid")

    agent_ids: list[Id] = Field(max_length=1000)
    search: str | None = Field(default=None, max_length=500)
    type: MemoryType | None = None
    status: Status | None = None
    filter: MemoryFilter | None = None
    limit: int = Field(default=100, ge=1, le=1000)
    cursor: str | None = Field(default=None, max_length=1000)
    order: Order = "oldest"

    def selection(self, tenant_id: str) -> Selection:
        """The rows this listing walks (or this count counts)."""
        return Selection(
            tenant_id,
            tuple(self.agent_ids),
            (self.status,) if self.status else None,
            (self.type,) if self.type else None,
            self.filter or MemoryFilter(),
            self.search or None,
        )


class DuplicateQuery(BaseModel):
    """Content about to be written, and its scope: does a live memory already say it?"""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(max_length=64_000)
    user_id: Id | None = None
    session_id: Id | None = None
    supersedes: Id | None = None


class DuplicatesBody(BaseModel):
    """Up to a batch of candidate writes of one agent."""

    model_config = ConfigDict(extra="forbid")

    items: list[DuplicateQuery] = Field(min_length=1, max_length=100)


class VerifyBody(BaseModel):
    """Ids a prune job tombstoned; the answer counts live memories still derived from them."""

    records: list[Id] = Field(default_factory=list)
    facts: list[Id] = Field(default_factory=list)
    documents: list[Id] = Field(default_factory=list)
    conversations: list[Id] = Field(default_factory=list)


def _state(request: Request) -> Any:
    return request.app.state


@router.post("/agents/{agent_id}/recall")
async def recall(
    agent_id: AgentPath, body: RecallBody, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """Top-k within the agent and the filter, ranked by the mode and floored; 409 when the
    query embedder is not the collection's."""
    try:
        found = await _state(request).recall.recall(
            tenant_id,
            agent_id,
            body.query,
            body.top_k,
            min_score=body.min_score,
            types=body.types,
            statuses=body.include_statuses,
            mode=body.mode,
            filter=body.filter,
            recency_half_life_days=body.recency_half_life_days,
        )
    except EmbedderMismatch as exc:
        raise Problem(
            409,
            "embedder-mismatch",
            "the query embedder differs from the embedder of the stored vectors",
            collection_fingerprint=exc.collection,
            query_fingerprint=exc.query,
        ) from None
    except LexicalOff as off:
        raise Problem(409, "lexical-disabled", str(off)) from None
    return jsonable_encoder(
        {
            "results": found.results,
            "mode": found.mode,
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


@router.get("/agents/{agent_id}/conversations/{conversation_id}")
async def get_conversation(
    agent_id: AgentPath, conversation_id: MemoryPath, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """A conversation of the agent: each message and each extracted fact with the decision
    taken and the status of the memory it wrote."""
    state = _state(request)
    record = await state.conversations.get(tenant_id, conversation_id)
    if record is None or record["agent_id"] != agent_id:
        raise Problem(404, detail="no such conversation")
    rows = await state.rows.get_many(tenant_id, conversation_memory_ids(record))
    return jsonable_encoder(conversation_view(record, rows))


@router.post("/memories/query")
async def list_memories(body: ListBody, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """One page of memories across the agents the gateway named (only the caller's own), with
    the cursor of the next page (null after the last)."""
    if not body.agent_ids:
        return {"memories": [], "next_cursor": None}
    try:
        after = decode_cursor(body.cursor, body.order) if body.cursor else None
    except BadCursor as bad:
        raise Problem(422, detail=str(bad), errors=[{"loc": ["query", "cursor"]}]) from None
    rows = await _state(request).rows.page(
        body.selection(tenant_id), body.order, after, body.limit + 1
    )
    more = len(rows) > body.limit
    rows = rows[: body.limit]
    return jsonable_encoder(
        {
            "memories": [memory_view(row) for row in rows],
            "next_cursor": encode_cursor(rows[-1], body.order) if more else None,
        }
    )


@router.post("/memories/count")
async def count_memories(body: ListBody, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """How many memories the same listing would walk, by status and by type."""
    if not body.agent_ids:
        return {"count": 0, "by_status": {}, "by_type": {}}
    total, by_status, by_type = await _state(request).rows.tally(body.selection(tenant_id))
    return {"count": total, "by_status": by_status, "by_type": by_type}


@router.post("/agents/{agent_id}/memories/duplicates")
async def find_duplicates(
    agent_id: AgentPath, body: DuplicatesBody, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """For each candidate write, the live memory of this agent and scope already holding the
    same content (normalised), or null."""
    candidates = [Candidate(**item.model_dump()) for item in body.items]
    found = await _state(request).dedup.find(tenant_id, agent_id, candidates)
    return {
        "found": [
            None if row is None else {"memory_id": row["memory_id"], "status": row["status"]}
            for row in found
        ]
    }


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
    agent_id: AgentPath,
    request: Request,
    tenant_id: TenantDep,
    user_id: Annotated[Id | None, Query()] = None,
    session_id: Annotated[Id | None, Query()] = None,
) -> dict[str, Any]:
    """Withdraw every live memory of the agent, or of one user or session scope of it."""
    state = _state(request)
    scope = MemoryFilter(user_id=user_id, session_id=session_id)
    selection = Selection.of_agent(tenant_id, agent_id, statuses=LIVE_STATUSES, filter=scope)
    rows = await state.rows.select_by(selection)
    done = await state.withdrawals.on_request(state.outbox, tenant_id, rows, "deleted")
    return {"agent_id": agent_id, "withdrawn": len(done)}


@router.post("/prune/verify")
async def verify_prune(body: VerifyBody, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """How many live memories still derive from each kind of tombstoned id (0 means clean)."""
    wanted = {"records": body.records, "facts": body.facts, "documents": body.documents}
    if body.conversations:
        wanted["conversations"] = body.conversations
    references = await _state(request).rows.count_derived_from(tenant_id, wanted, LIVE_STATUSES)
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
