"""Writing memories: checked at the door, deduplicated against live memories, then queued.

Content the memory service would refuse (empty, whitespace only, outside the length limits it
shares with the gateway) is a 422 here, before anything is queued. Content a live memory of
the same agent and scope already holds answers 200 with that memory's id and queues nothing,
unless the write says `allow_duplicate`. When the memory service cannot be asked, the write is
queued anyway: the memory service deduplicates again when it stores, and the status URL then
reports the write as a duplicate of the memory it found.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from engram_events import Envelope, new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.content import PROBLEMS, ContentLimits, content_problem, normalized_sha256
from engram_events.ids import Attributes, Id
from engram_events.payloads.memories import MemoryType, MemoryWriteRequested
from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.dependencies import Deps, GatewayDeps
from engram_gateway.api.memory_proxy import AgentId, owned_agent
from engram_gateway.domain.ids import memory_id_for
from engram_gateway.domain.model import Caller
from engram_platform.problems import Problem

router = APIRouter(tags=["memories"])
log = logging.getLogger(__name__)
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
    user_id: Id | None = Field(default=None, description="the end user this memory is about")
    session_id: Id | None = Field(default=None, description="the session it came from")
    allow_duplicate: bool = Field(
        default=False, description="store it even if a live memory in this scope says the same"
    )


class WriteMemories(BaseModel):
    """Many memories of one agent in one request (the body stays under the 1 MiB JSON cap)."""

    model_config = ConfigDict(extra="forbid")

    memories: list[WriteMemory] = Field(min_length=1, max_length=MAX_BATCH)


def _check_content(memories: list[WriteMemory], limits: ContentLimits, where: list[str]) -> None:
    """422 naming every memory whose content the memory service would refuse."""
    errors: list[dict[str, Any]] = []
    for n, memory in enumerate(memories):
        problem = content_problem(memory.content, limits)
        if problem is not None:
            loc = [*where, str(n), "content"] if len(where) > 1 else [*where, "content"]
            bounds = {"too_long": limits.max_chars, "too_short": limits.min_chars}
            shown = f" ({bounds[problem]} characters)" if problem in bounds else ""
            errors.append(
                {"loc": loc, "msg": f"content {PROBLEMS[problem]}{shown}", "type": problem}
            )
    if errors:
        raise Problem(422, detail=errors[0]["msg"], errors=errors)


async def _duplicates(
    deps: GatewayDeps, caller: Caller, agent_id: str, memories: list[WriteMemory]
) -> list[dict[str, Any] | None]:
    """For each write, the live memory it would duplicate (None when it opted out, when none
    does, or when the memory service could not be asked: it deduplicates again on store)."""
    asked = [m for m in memories if not m.allow_duplicate]
    if not asked:
        return [None] * len(memories)
    items = [
        {
            "content": m.content,
            "user_id": m.user_id,
            "session_id": m.session_id,
            "supersedes": m.supersedes,
        }
        for m in asked
    ]
    try:
        response = await deps.owners.request(
            "memory",
            "POST",
            f"/internal/v1/agents/{agent_id}/memories/duplicates",
            tenant_id=caller.tenant_id,
            json={"items": items},
        )
    except Problem:
        response = None
    if response is None or response.status_code != 200:
        log.warning("dedup lookup unavailable; queued anyway", extra={"agent_id": agent_id})
        return [None] * len(memories)
    answers = iter(response.json()["found"])
    return [None if m.allow_duplicate else next(answers) for m in memories]


def _accepted(agent_id: str, memory_id: str) -> dict[str, Any]:
    """What a 202 says of one queued write: its id, status and where to watch it."""
    return {
        "memory_id": memory_id,
        "status": "pending",
        "status_url": f"/v1/agents/{agent_id}/memories/{memory_id}",
    }


def _deduplicated(agent_id: str, found: dict[str, Any]) -> dict[str, Any]:
    """What a write answers when a live memory already holds its content."""
    return {
        "memory_id": found["memory_id"],
        "status": found["status"],
        "deduplicated": True,
        "status_url": f"/v1/agents/{agent_id}/memories/{found['memory_id']}",
    }


def _request(tenant_id: str, agent_id: str, memory: WriteMemory) -> Envelope[MemoryWriteRequested]:
    """The `memory.write_requested` event of one write."""
    payload = MemoryWriteRequested(
        memory_id=memory_id_for(tenant_id, agent_id, memory.idempotency_key),
        agent_id=agent_id,
        **memory.model_dump(),
    )
    return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id=tenant_id)


@router.post("/v1/agents/{agent_id}/memories", status_code=202)
async def write_memory(
    agent_id: AgentId, body: WriteMemory, deps: Deps, caller: CallerDep, registry: RegistryDep
) -> JSONResponse:
    """Queue the write (acks=all) and answer 202 with its id and status URL; 200 with the
    existing memory's id when a live one in this scope already says the same."""
    await owned_agent(registry, caller, agent_id)
    _check_content([body], deps.settings.memory_limits, ["body"])
    event = _request(caller.tenant_id, agent_id, body)
    memory_id = event.payload.memory_id
    [found] = await _duplicates(deps, caller, agent_id, [body])
    if found is not None and found["memory_id"] != memory_id:
        return JSONResponse(_deduplicated(agent_id, found), status_code=200)
    await deps.intake.accept(
        event,
        "memory",
        memory_id,
        refused="the memory could not be queued; retry",
        agent_id=agent_id,
    )
    return JSONResponse(_accepted(agent_id, memory_id), status_code=202)


@router.post("/v1/agents/{agent_id}/memories:batch", status_code=202)
async def write_memories(
    agent_id: AgentId,
    body: WriteMemories,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Queue up to 100 writes with one publish (acks=all); 202 lists them in request order,
    a write a live memory (or an earlier one of the batch) already holds marked deduplicated.

    All or nothing as far as the answer goes: a 503 may leave some queued, so a retry must
    send the same idempotency keys (the client library sets them) to write each memory once.
    """
    await owned_agent(registry, caller, agent_id)
    keys = [m.idempotency_key for m in body.memories if m.idempotency_key is not None]
    if len(set(keys)) != len(keys):
        raise Problem(422, detail="idempotency keys must differ within one batch")
    _check_content(body.memories, deps.settings.memory_limits, ["body", "memories"])
    tenant_id = caller.tenant_id
    found = await _duplicates(deps, caller, agent_id, body.memories)
    answers: list[dict[str, Any]] = []
    batch = []
    queued: dict[tuple[str | None, str | None, str], dict[str, Any]] = {}
    for memory, existing in zip(body.memories, found, strict=True):
        event = _request(tenant_id, agent_id, memory)
        scope = (memory.user_id, memory.session_id, normalized_sha256(memory.content))
        if not memory.allow_duplicate and existing is None:
            existing = queued.get(scope)
        if existing is not None and existing["memory_id"] != event.payload.memory_id:
            answers.append(_deduplicated(agent_id, existing))
            continue
        answers.append(_accepted(agent_id, event.payload.memory_id))
        batch.append(event)
        queued.setdefault(scope, {"memory_id": event.payload.memory_id, "status": "pending"})
    if batch:
        await deps.intake.accept_many(
            batch,
            "memory",
            [(e.payload.memory_id, {"agent_id": agent_id}) for e in batch],
            tenant_id=tenant_id,
            refused="the memories could not be queued; retry the batch",
        )
    return JSONResponse({"memories": answers}, status_code=202)
