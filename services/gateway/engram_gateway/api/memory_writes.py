"""Writing memories: checked at the door, deduplicated against live memories, then queued.

Content the memory service would refuse (empty, whitespace only, outside the length limits it
shares with the gateway) is a 422 here, before anything is queued. Content a live memory of
the same agent and scope already holds answers 200 with that memory's id and queues nothing,
unless the write says `allow_duplicate`. When the memory service cannot be asked, the write is
queued anyway: the memory service deduplicates again when it stores, and the status URL then
reports the write as a duplicate of the memory it found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from engram_events import Envelope, new_event
from engram_events.catalog import MEMORY_BULK_WRITE_REQUESTED, MEMORY_WRITE_REQUESTED
from engram_events.content import PROBLEMS, ContentLimits, content_problem
from engram_events.payloads.memories import Author, MemoryWrite, MemoryWriteRequested
from engram_events.registry import EventType
from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.api.lean import AGENT_PATH, Admitted, PublicRoute
from engram_gateway.api.memory_proxy import AgentId, owned_agent
from engram_gateway.domain.edits import author_of
from engram_gateway.domain.expiry import MAX_TTL_SECONDS, expiry, expiry_problem
from engram_gateway.domain.ids import memory_id_for
from engram_gateway.domain.rate_limits import WRITE
from engram_gateway.service.memory_writes import Outcome
from engram_platform.problems import Problem

router = APIRouter(tags=["memories"])
MAX_BATCH = 100
TtlSeconds = Annotated[int, Field(strict=True, ge=1, le=MAX_TTL_SECONDS)]


class WriteMemory(MemoryWrite):
    """A memory to store: the event's own fields and constraints, and `ttl_seconds` as a
    relative `expires_at` (one or the other, in the future, at most ten years away)."""

    model_config = ConfigDict(extra="forbid")

    ttl_seconds: TtlSeconds | None = Field(
        default=None, description="seconds until it expires (instead of expires_at)"
    )

    @model_validator(mode="after")
    def _one_future_expiry(self) -> WriteMemory:
        """`ttl_seconds` or `expires_at`, and an `expires_at` ahead but within ten years."""
        problem = expiry_problem(self.ttl_seconds, self.expires_at, datetime.now(UTC))
        if problem is not None:
            raise ValueError(problem)
        return self

    def write(self, now: datetime) -> dict[str, Any]:
        """The event's fields: `ttl_seconds` becomes `expires_at`, counted from `now`."""
        fields = self.model_dump(exclude={"ttl_seconds"})
        fields["expires_at"] = expiry(self.ttl_seconds, self.expires_at, now)
        return fields


class WriteMemories(BaseModel):
    """Many memories of one agent in one request (the body stays under the 1 MiB JSON cap)."""

    model_config = ConfigDict(extra="forbid")

    memories: list[WriteMemory] = Field(min_length=1, max_length=MAX_BATCH)


def check_content(memories: Sequence[MemoryWrite], limits: ContentLimits, where: list[str]) -> None:
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


def accepted(agent_id: str, memory_id: str) -> dict[str, Any]:
    """What a 202 says of one queued write: its id, status and where to watch it."""
    return {
        "memory_id": memory_id,
        "status": "pending",
        "status_url": f"/v1/agents/{agent_id}/memories/{memory_id}",
    }


def _deduplicated(agent_id: str, outcome: Outcome) -> dict[str, Any]:
    """What a write answers when a live memory already holds its content."""
    return {
        "memory_id": outcome.memory_id,
        "status": outcome.status,
        "deduplicated": True,
        "status_url": f"/v1/agents/{agent_id}/memories/{outcome.memory_id}",
    }


def outcome_answer(agent_id: str, outcome: Outcome) -> dict[str, Any]:
    """A write's entry in the answer: queued, or held by a live memory."""
    return (
        _deduplicated(agent_id, outcome)
        if outcome.deduplicated
        else accepted(agent_id, outcome.memory_id)
    )


def write_request(
    tenant_id: str,
    agent_id: str,
    memory: WriteMemory,
    author: Author,
    kind: EventType[MemoryWriteRequested] = MEMORY_WRITE_REQUESTED,
) -> Envelope[MemoryWriteRequested]:
    """The `memory.write_requested` event of one write (its bulk-lane twin for a batch), naming
    the key that asked."""
    payload = MemoryWriteRequested(
        memory_id=memory_id_for(tenant_id, agent_id, memory.idempotency_key),
        agent_id=agent_id,
        author=author,
        **memory.write(datetime.now(UTC)),
    )
    return new_event(kind, payload, tenant_id=tenant_id)


@router.post("/v1/agents/{agent_id}/memories", status_code=202)
async def write_memory(
    agent_id: AgentId, body: WriteMemory, deps: Deps, caller: CallerDep, registry: RegistryDep
) -> Response:
    """Queue the write (acks=all) and answer 202 with its id and status URL; 200 with the
    existing memory's id when a live one in this scope already says the same."""
    await owned_agent(registry, caller, agent_id)
    admitted = Admitted(deps, caller, agent_id, body)
    await _check_write(admitted)
    return await _queue_write(admitted)


async def _check_write(admitted: Admitted) -> None:
    """What a single write must pass besides its body's model and its agent: content the
    memory service would take, and sources that are the agent's (or the tenant's)."""
    deps, write = admitted.deps, admitted.body
    check_content([write], deps.settings.memory_limits, ["body"])
    await deps.sources.check(admitted.caller.tenant_id, admitted.agent_id, [write], ["body"])


async def _queue_write(admitted: Admitted) -> Response:
    """Queue a checked single write; 202, or 200 with the live memory that holds it."""
    caller, agent_id = admitted.caller, admitted.agent_id
    event = write_request(caller.tenant_id, agent_id, admitted.body, author_of(caller))
    outcome = await admitted.deps.memory_writes.write(event)
    status = 200 if outcome.deduplicated else 202
    return JSONResponse(outcome_answer(agent_id, outcome), status_code=status)


LEAN_WRITE = PublicRoute(
    template="/v1/agents/{agent_id}/memories",
    pattern=re.compile(f"{AGENT_PATH}/memories"),
    route_class=WRITE,
    model=WriteMemory,
    admit=_check_write,
    answer=_queue_write,
)
"""The single write as the gateway's lean layer serves it (`engram_gateway.api.lean`)."""


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
    check_content(body.memories, deps.settings.memory_limits, ["body", "memories"])
    await deps.sources.check(caller.tenant_id, agent_id, body.memories, ["body", "memories"])
    tenant_id = caller.tenant_id
    bulk = MEMORY_BULK_WRITE_REQUESTED
    author = author_of(caller)
    events = [write_request(tenant_id, agent_id, m, author, bulk) for m in body.memories]
    outcomes = await deps.memory_writes.write_batch(tenant_id, agent_id, events)
    return JSONResponse(
        {"memories": [outcome_answer(agent_id, outcome) for outcome in outcomes]}, status_code=202
    )
