"""Conversations: an agent hands over a chat transcript and the memory service turns it into
memories (one per user and assistant message, or, with a model configured there, the facts the
model extracts and reconciles with what the agent already holds).

The limits are checked at the door (messages per conversation, characters per message: the
memory content bound), then the conversation is queued (acks=all) and answered 202 with its
status URL. Deleting a conversation is a prune job: every memory derived from it is withdrawn
through the tombstone path, and the job reaches `verified_empty`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from engram_events import new_event
from engram_events.catalog import CONVERSATION_SUBMITTED
from engram_events.content import PROBLEMS
from engram_events.ids import Id
from engram_events.payloads.conversations import (
    MAX_MESSAGES,
    ConversationMessage,
    ConversationSubmitted,
)
from engram_events.payloads.prune import PruneSelector
from engram_events.values import Metadata
from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.dependencies import Deps, GatewayDeps
from engram_gateway.api.memory_proxy import AgentId, MemoryId, owned_agent
from engram_gateway.domain.ids import derived_id
from engram_gateway.domain.model import Caller
from engram_platform.problems import Problem

router = APIRouter(tags=["conversations"])


class Message(ConversationMessage):
    """One chat message: `role` user, assistant, system or tool; `content` may be absent."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Conversation(BaseModel):
    """A transcript to remember, and the scope its memories get."""

    model_config = ConfigDict(extra="forbid")

    messages: list[Message] = Field(min_length=1, max_length=MAX_MESSAGES)
    user_id: Id | None = Field(default=None, description="the end user the conversation is with")
    session_id: Id | None = Field(default=None, description="the session it took place in")
    metadata: Metadata = Field(
        default_factory=dict, description="copied onto every memory the conversation writes"
    )
    idempotency_key: Id | None = Field(
        default=None, description="a retried POST with the same key names the same conversation"
    )


def _check_limits(body: Conversation, max_messages: int, max_chars: int) -> None:
    """422 naming the messages over the configured limits (the event's own bound is higher)."""
    errors: list[dict[str, Any]] = []
    if len(body.messages) > max_messages:
        errors.append(
            {
                "loc": ["body", "messages"],
                "msg": f"a conversation carries at most {max_messages} messages",
                "type": "too_many",
            }
        )
    for n, message in enumerate(body.messages):
        if message.content is not None and len(message.content) > max_chars:
            errors.append(
                {
                    "loc": ["body", "messages", str(n), "content"],
                    "msg": f"content {PROBLEMS['too_long']} ({max_chars} characters)",
                    "type": "too_long",
                }
            )
    if errors:
        raise Problem(422, detail=errors[0]["msg"], errors=errors[:20])


def _status_url(agent_id: str, conversation_id: str) -> str:
    return f"/v1/agents/{agent_id}/conversations/{conversation_id}"


@router.post("/v1/agents/{agent_id}/conversations", status_code=202)
async def submit_conversation(
    agent_id: AgentId,
    body: Conversation,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Queue the conversation (acks=all) and answer 202 with its id and status URL."""
    await owned_agent(registry, caller, agent_id)
    settings = deps.settings
    _check_limits(body, settings.memory_conversation_max_messages, settings.memory_limits.max_chars)
    conversation_id = derived_id("conv", caller.tenant_id, agent_id, body.idempotency_key)
    payload = ConversationSubmitted(
        conversation_id=conversation_id, agent_id=agent_id, **body.model_dump()
    )
    event = new_event(CONVERSATION_SUBMITTED, payload, tenant_id=caller.tenant_id)
    await deps.intake.accept(
        event,
        "conversation",
        conversation_id,
        refused="the conversation could not be queued; retry",
        agent_id=agent_id,
    )
    return JSONResponse(
        {
            "conversation_id": conversation_id,
            "status": "pending",
            "status_url": _status_url(agent_id, conversation_id),
        },
        status_code=202,
    )


async def _conversation(
    deps: GatewayDeps, caller: Caller, agent_id: str, conversation_id: str
) -> dict[str, Any]:
    """The memory service's view of the conversation, `pending` while only the gateway knows
    it, or a 404."""
    return await deps.owned.view_or_pending(
        caller.tenant_id,
        service="memory",
        path=f"/internal/v1/agents/{agent_id}/conversations/{conversation_id}",
        kind="conversation",
        item_id=conversation_id,
        pending={"conversation_id": conversation_id, "agent_id": agent_id, "settled": False},
        agent_id=agent_id,
    )


@router.get("/v1/agents/{agent_id}/conversations/{conversation_id}")
async def get_conversation(
    agent_id: AgentId,
    conversation_id: MemoryId,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """What became of each message and each extracted fact: the decision, the memory written
    and its status; `settled` once processing is over and no memory it wrote is pending."""
    await owned_agent(registry, caller, agent_id)
    return JSONResponse(await _conversation(deps, caller, agent_id, conversation_id))


@router.delete("/v1/agents/{agent_id}/conversations/{conversation_id}", status_code=202)
async def delete_conversation(
    agent_id: AgentId,
    conversation_id: MemoryId,
    deps: Deps,
    caller: CallerDep,
    registry: RegistryDep,
) -> JSONResponse:
    """Delete the conversation's texts and withdraw every memory derived from it, as a prune
    job whose status URL reports `verified_empty`."""
    await owned_agent(registry, caller, agent_id)
    await _conversation(deps, caller, agent_id, conversation_id)
    job_id = await deps.prune.start(
        caller.tenant_id,
        "conversation",
        PruneSelector(conversation_id=conversation_id),
        agent_id=agent_id,
    )
    return JSONResponse(
        {
            "conversation_id": conversation_id,
            "prune_job_id": job_id,
            "status": "running",
            "status_url": f"/v1/prune-jobs/{job_id}",
        },
        status_code=202,
    )
