"""The internal routes: each decodes its input, calls a use case or reads a row, and answers."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.encoders import jsonable_encoder
from fastapi.responses import Response

from engram_embedders.reindex import Refused
from engram_events.ids import Id
from engram_events.memory_filter import MemoryFilter
from engram_events.retention import AgentRetention
from engram_memory.api.bodies import (
    DuplicatesBody,
    LineageBody,
    ListBody,
    RecallBody,
    ReindexBody,
    VerifyBody,
)
from engram_memory.api.dependencies import Deps
from engram_memory.api.lean import duplicates_found, recalled
from engram_memory.api.views import conversation_view, memory_view
from engram_memory.domain.listing import BadCursor, decode_cursor, encode_cursor
from engram_memory.domain.withdrawal import LIVE_STATUSES
from engram_platform.audit import AuditPageRequest
from engram_platform.internal import KNOWN_PATH, KnownIds, TenantDep
from engram_platform.problems import Problem

log = logging.getLogger(__name__)
router = APIRouter(prefix="/internal/v1", tags=["internal"])
AgentPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
MemoryPath = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]


def _encoded(body: dict[str, Any]) -> dict[str, Any]:
    """A response body with datetimes and models turned into JSON values."""
    encoded: dict[str, Any] = jsonable_encoder(body)
    return encoded


@router.post("/agents/{agent_id}/recall", response_model=None)
async def recall(
    agent_id: AgentPath, body: RecallBody, deps: Deps, tenant_id: TenantDep
) -> Response:
    """Top-k within the agent and the filter, ranked by the mode and floored; 409 when the
    query embedder is not the collection's (served by `lean.RECALL` when the call is clean)."""
    found = await recalled(deps, tenant_id, agent_id, body)
    return Response(found, media_type="application/json")


@router.get("/agents/{agent_id}/memories/{memory_id}")
async def get_memory(
    agent_id: AgentPath, memory_id: MemoryPath, deps: Deps, tenant_id: TenantDep
) -> dict[str, Any]:
    """One memory of the agent, with status and provenance."""
    row = await deps.rows.get(tenant_id, memory_id)
    if row is None or row.agent_id != agent_id:
        raise Problem(404, detail="no such memory")
    return _encoded(memory_view(row))


@router.get("/agents/{agent_id}/memories/{memory_id}/history")
async def memory_history(
    agent_id: AgentPath, memory_id: MemoryPath, deps: Deps, tenant_id: TenantDep
) -> dict[str, Any]:
    """Every version of the memory's chain, oldest first: who wrote each, when and why."""
    versions = await deps.history.versions(tenant_id, agent_id, memory_id)
    if versions is None:
        raise Problem(404, detail="no such memory")
    return _encoded({"memory_id": memory_id, "agent_id": agent_id, "versions": versions})


@router.get("/agents/{agent_id}/retention")
async def get_retention(agent_id: AgentPath, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """The agent's own retention rules, and the service's defaults for the other types."""
    return await deps.retention.in_force(tenant_id, agent_id)


@router.put("/agents/{agent_id}/retention")
async def set_retention(
    agent_id: AgentPath, body: AgentRetention, deps: Deps, tenant_id: TenantDep
) -> dict[str, Any]:
    """Replace the agent's own rules; each applies from the agent's next stored memory of
    its type on, counted and evicted over that type's one population."""
    return await deps.retention.set_rules(tenant_id, agent_id, body)


@router.get("/agents/{agent_id}/conversations/{conversation_id}")
async def get_conversation(
    agent_id: AgentPath, conversation_id: MemoryPath, deps: Deps, tenant_id: TenantDep
) -> dict[str, Any]:
    """A conversation of the agent: each message and each extracted fact with the decision
    taken and the status of the memory it wrote."""
    record = await deps.conversations.get(tenant_id, conversation_id)
    if record is None or record.agent_id != agent_id:
        raise Problem(404, detail="no such conversation")
    rows = await deps.rows.get_many(tenant_id, record.memory_ids())
    return _encoded(conversation_view(record, rows))


@router.post("/memories/query")
async def list_memories(body: ListBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """One page of memories across the agents the gateway named (only the caller's own), with
    the cursor of the next page (null after the last)."""
    if not body.agent_ids:
        return {"memories": [], "next_cursor": None}
    try:
        after = decode_cursor(body.cursor, body.order) if body.cursor else None
    except BadCursor as bad:
        raise Problem(422, detail=str(bad), errors=[{"loc": ["query", "cursor"]}]) from None
    rows = await deps.rows.page(body.selection(tenant_id), body.order, after, body.limit + 1)
    more = len(rows) > body.limit
    rows = rows[: body.limit]
    return _encoded(
        {
            "memories": [memory_view(row) for row in rows],
            "next_cursor": encode_cursor(rows[-1], body.order) if more else None,
        }
    )


@router.post("/memories/count")
async def count_memories(body: ListBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """How many memories the same listing would walk, by status and by type."""
    if not body.agent_ids:
        return {"count": 0, "by_status": {}, "by_type": {}}
    total, by_status, by_type = await deps.rows.tally(body.selection(tenant_id))
    return {"count": total, "by_status": by_status, "by_type": by_type}


@router.post("/memories/vectors")
async def memory_vectors(body: KnownIds, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """The stored vectors of these memories and the embedder that made them (a tenant export
    with vectors); a memory without a vector is left out."""
    if deps.vectors is None:
        raise Problem(503, detail="vectors are not readable here")
    return await deps.vectors.of(tenant_id, body.ids)


@router.post("/agents/{agent_id}/memories/duplicates", response_model=None)
async def find_duplicates(
    agent_id: AgentPath, body: DuplicatesBody, deps: Deps, tenant_id: TenantDep
) -> Response:
    """For each candidate write, the live memory of this agent and scope already holding the
    same content (normalised), or null (served by `lean.DUPLICATES` when the call is clean)."""
    found = await duplicates_found(deps, tenant_id, agent_id, body)
    return Response(found, media_type="application/json")


@router.delete("/agents/{agent_id}/memories/{memory_id}")
async def delete_memory(
    agent_id: AgentPath, memory_id: MemoryPath, deps: Deps, tenant_id: TenantDep
) -> dict[str, Any]:
    """Withdraw one memory: its vector goes, its row keeps status and hashes."""
    if not await deps.deletions.delete(tenant_id, agent_id, memory_id):
        raise Problem(404, detail="no such memory")
    return {"memory_id": memory_id, "status": "withdrawn"}


@router.delete("/agents/{agent_id}/memories")
async def clear_agent(
    agent_id: AgentPath,
    deps: Deps,
    tenant_id: TenantDep,
    user_id: Annotated[Id | None, Query()] = None,
    session_id: Annotated[Id | None, Query()] = None,
) -> dict[str, Any]:
    """Withdraw every live memory of the agent, or of one user or session scope of it."""
    scope = MemoryFilter(user_id=user_id, session_id=session_id)
    withdrawn = await deps.deletions.clear(tenant_id, agent_id, scope)
    return {"agent_id": agent_id, "withdrawn": withdrawn}


@router.post("/prune/verify")
async def verify_prune(body: VerifyBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """How many live memories still derive from each kind of tombstoned id (0 means clean)."""
    wanted = {"records": body.records, "facts": body.facts, "documents": body.documents}
    if body.conversations:
        wanted["conversations"] = body.conversations
    references = await deps.rows.count_derived_from(tenant_id, wanted, LIVE_STATUSES)
    return {"references": references}


@router.post("/lineage/derived")
async def derived_memories(body: LineageBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Memories (any status) whose `derived_from` names one of the ids."""
    rows = await deps.rows.derived_from_any(
        tenant_id,
        body.ids,
        ["pending", "active", "superseded", "withdrawn", "rejected", "expired"],
    )
    return {
        "memories": [
            {
                "memory_id": row.memory_id,
                "agent_id": row.agent_id,
                "status": row.status,
                "derived_from": list(row.derived_from),
            }
            for row in rows
        ]
    }


@router.get("/lineage/memories/{memory_id}")
async def memory_sources(memory_id: MemoryPath, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """What a memory derives from."""
    row = await deps.rows.get(tenant_id, memory_id)
    if row is None:
        raise Problem(404, detail="no such memory")
    return {
        "memory_id": memory_id,
        "agent_id": row.agent_id,
        "status": row.status,
        "derived_from": list(row.derived_from),
    }


@router.post(KNOWN_PATH.removeprefix("/internal/v1"))
async def known(body: KnownIds, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Which of the ids name the tenant's memories or conversations (any status), with the
    agent of each: the gateway checks a write's `derived_from` and `supersedes` with it."""
    agents = {
        **await deps.conversations.owners(tenant_id, body.ids),
        **await deps.rows.owners(tenant_id, body.ids),
    }
    return {"known": sorted(agents), "agents": agents}


@router.post("/reindex")
async def start_reindex(body: ReindexBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Start moving the store to another embedder; 409 while one runs or for the same space."""
    if deps.reindex is None:
        raise Problem(409, "reindex-unavailable", "this service runs no reindexer")
    try:
        job = await deps.reindex.start(body.embedder, body.hashing_dimension)
    except Refused as refused:
        raise Problem(refused.status, refused.kind, str(refused)) from None
    log.info("reindex requested", extra={"tenant_id": tenant_id, "embedder": body.embedder})
    return job.view(datetime.now(UTC))


@router.get("/reindex")
async def reindex_progress(deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """The latest reindex's state, done/total, times and rate (state `none`: never run)."""
    progress = None if deps.reindex is None else deps.reindex.progress()
    return progress or {"state": "none"}


@router.post("/audit/query")
async def audit_page(body: AuditPageRequest, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """A page of the tenant's audit entries this service keeps (memories the sweeper expired),
    newest first, before the gateway's position, for the gateway to merge with its own."""
    entries = await deps.audit.page(tenant_id, body.query())
    return {"entries": [entry.model_dump(mode="json") for entry in entries]}
