"""Editing a memory and reading its history.

`PATCH` writes a new version through the normal write path (the same checks at the door, the
same `memory.write_requested` event, quotas) that supersedes the edited one: the old version
stays readable as `superseded` and leaves recall once the new one is stored. `metadata`, when
given, replaces the old metadata whole. Exactly one edit of a version wins; the other is a 409
naming the newer version, as is an edit of a version that is no longer the live one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from engram_events.payloads.memories import EditReason
from engram_events.values import Metadata, Text
from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.api.memory_proxy import AgentId, MemoryId, owned_agent
from engram_gateway.api.memory_writes import TtlSeconds, accepted, check_content
from engram_gateway.domain.edits import Change
from engram_gateway.domain.expiry import expiry, expiry_problem

router = APIRouter(tags=["memories"])


class EditMemory(BaseModel):
    """An edit: new content, new metadata (replacing the old whole) and/or a new expiry, and
    why; the new version keeps the old expiry unless one is given."""

    model_config = ConfigDict(extra="forbid")

    content: Text | None = Field(default=None, max_length=64_000)
    metadata: Metadata | None = None
    reason: EditReason | None = Field(default=None, description="why, at most 500 characters")
    ttl_seconds: TtlSeconds | None = Field(
        default=None, description="the new version expires this many seconds from now"
    )
    expires_at: AwareDatetime | None = Field(
        default=None, description="the new version expires then (not with ttl_seconds)"
    )

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        """Name every unknown field in one message, so a typo is not a silent no-op."""
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(cls.model_fields))
            if unknown:
                raise ValueError(f"unknown fields: {', '.join(unknown)}")
        return data

    @model_validator(mode="after")
    def _changes_something(self) -> EditMemory:
        """An edit with no content, metadata nor expiry would only restate the memory."""
        expiring = self.ttl_seconds is not None or self.expires_at is not None
        if self.content is None and self.metadata is None and not expiring:
            raise ValueError("give content, metadata and/or an expiry")
        problem = expiry_problem(self.ttl_seconds, self.expires_at, datetime.now(UTC))
        if problem is not None:
            raise ValueError(problem)
        return self


@router.patch("/v1/agents/{agent_id}/memories/{memory_id}", status_code=202)
async def edit_memory(
    agent_id: AgentId,
    memory_id: MemoryId,
    body: EditMemory,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Queue the new version (acks=all) and answer 202 with its id, status URL and the version
    it supersedes; 404 for another tenant's or a missing memory, 409 when this version is not
    the live one or another edit of it won."""
    await owned_agent(registry, caller, agent_id)
    change = Change(
        content=body.content,
        metadata=body.metadata,
        reason=body.reason,
        expires_at=expiry(body.ttl_seconds, body.expires_at, datetime.now(UTC)),
    )
    write = await deps.memory_edits.prepare(caller, agent_id, memory_id, change)
    check_content([write], deps.settings.memory_limits, ["body"])
    await deps.sources.check(caller.tenant_id, agent_id, [write], ["body"])
    outcome = await deps.memory_edits.commit(caller.tenant_id, write)
    target = {"agent_id": agent_id, "memory_id": memory_id, "new_memory_id": outcome.memory_id}
    await deps.audit.record(
        caller, "memory.edited", target, once_per=(outcome.memory_id,), reason=body.reason
    )
    return JSONResponse(
        {**accepted(agent_id, outcome.memory_id), "supersedes": memory_id}, status_code=202
    )


@router.get("/v1/agents/{agent_id}/memories/{memory_id}/history")
async def memory_history(
    agent_id: AgentId,
    memory_id: MemoryId,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Every version of the memory's chain, oldest first, older and newer than this one: its
    id, status, content and metadata (while held), when, which key and role wrote it, and why."""
    await owned_agent(registry, caller, agent_id)
    return JSONResponse(await deps.memory_edits.history(caller.tenant_id, agent_id, memory_id))
