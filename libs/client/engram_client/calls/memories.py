"""Calls for agents, memories, conversations and recall."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engram_client import models
from engram_client.calls.base import (
    Call,
    filter_json,
    keyed,
    new_idempotency_key,
    no_answer,
    only_set,
    segment,
)

# Agents


def create_agent(name: str | None) -> Call[models.Agent]:
    """Not retry-safe: each POST registers a new agent."""
    body = {"name": name} if name is not None else {}
    return Call("POST", "/v1/agents", models.Agent.model_validate, json=body)


def list_agents() -> Call[list[models.Agent]]:
    """The caller's agents."""
    return Call(
        "GET",
        "/v1/agents",
        lambda b: [models.Agent.model_validate(a) for a in b["agents"]],
        retry_safe=True,
    )


def get_agent(agent_id: str) -> Call[models.Agent]:
    """One agent."""
    return Call(
        "GET", f"/v1/agents/{segment(agent_id)}", models.Agent.model_validate, retry_safe=True
    )


def delete_agent(agent_id: str) -> Call[None]:
    """Deleting is idempotent in effect (a repeat after a lost answer reports NotFound)."""
    return Call("DELETE", f"/v1/agents/{segment(agent_id)}", no_answer, retry_safe=True)


# Memories


def write_memory(
    agent_id: str,
    content: str,
    *,
    type: str,
    metadata: Mapping[str, Any] | None,
    derived_from: Sequence[str] | None,
    supersedes: str | None,
    idempotency_key: str | None,
    user_id: str | None = None,
    session_id: str | None = None,
    allow_duplicate: bool = False,
    ttl_seconds: int | None = None,
    expires_at: datetime | None = None,
) -> Call[models.MemoryAccepted]:
    """Retry-safe through the idempotency key, generated here when the caller gives none; an
    expiry (`ttl_seconds` or a timezone-aware `expires_at`, not both) is sent when given."""
    key, headers = keyed(idempotency_key)
    body: dict[str, Any] = {
        "content": content,
        "type": type,
        "metadata": dict(metadata or {}),
        "derived_from": list(derived_from or []),
        "idempotency_key": key,
        **only_set({"supersedes": supersedes, "user_id": user_id, "session_id": session_id}),
    }
    if allow_duplicate:
        body["allow_duplicate"] = True
    if ttl_seconds is not None:
        body["ttl_seconds"] = ttl_seconds
    if expires_at is not None:
        body["expires_at"] = expires_at.isoformat()
    return Call(
        "POST",
        f"/v1/agents/{segment(agent_id)}/memories",
        models.MemoryAccepted.model_validate,
        json=body,
        headers=headers,
        retry_safe=True,
    )


def write_memories(
    agent_id: str, memories: Sequence[Mapping[str, Any]]
) -> Call[list[models.MemoryAccepted]]:
    """Up to 100 memories in one request, each with `write_memory`'s fields (scope,
    `allow_duplicate`, `ttl_seconds` or `expires_at` as ISO-8601 text included); each gets an idempotency key here when it has none, so a
    retried batch writes every memory once."""
    body = [
        {**memory, "idempotency_key": memory.get("idempotency_key") or new_idempotency_key()}
        for memory in memories
    ]
    return Call(
        "POST",
        f"/v1/agents/{segment(agent_id)}/memories:batch",
        lambda answer: [models.MemoryAccepted.model_validate(m) for m in answer["memories"]],
        json={"memories": body},
        retry_safe=True,
    )


def converse(
    agent_id: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    user_id: str | None = None,
    session_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    idempotency_key: str | None = None,
) -> Call[models.ConversationAccepted]:
    """A conversation to turn into memories; retry-safe through its idempotency key (the
    gateway derives the conversation id from it), generated here when the caller gives none."""
    key, headers = keyed(idempotency_key)
    body: dict[str, Any] = {
        "messages": [dict(m) for m in messages],
        "metadata": dict(metadata or {}),
        "idempotency_key": key,
        **only_set({"user_id": user_id, "session_id": session_id}),
    }
    return Call(
        "POST",
        f"/v1/agents/{segment(agent_id)}/conversations",
        models.ConversationAccepted.model_validate,
        json=body,
        headers=headers,
        retry_safe=True,
    )


def _conversation_path(agent_id: str, conversation_id: str) -> str:
    return f"/v1/agents/{segment(agent_id)}/conversations/{segment(conversation_id)}"


def get_conversation(agent_id: str, conversation_id: str) -> Call[models.Conversation]:
    """What became of each message and fact of a conversation."""
    return Call(
        "GET",
        _conversation_path(agent_id, conversation_id),
        models.Conversation.model_validate,
        retry_safe=True,
    )


def delete_conversation(agent_id: str, conversation_id: str) -> Call[models.ConversationDeleting]:
    """Retry-safe: a repeat starts another prune job over what is already withdrawn."""
    return Call(
        "DELETE",
        _conversation_path(agent_id, conversation_id),
        models.ConversationDeleting.model_validate,
        retry_safe=True,
    )


def get_memory(agent_id: str, memory_id: str) -> Call[models.Memory]:
    """One memory with status, provenance and timestamps."""
    return Call(
        "GET",
        f"/v1/agents/{segment(agent_id)}/memories/{segment(memory_id)}",
        models.Memory.model_validate,
        retry_safe=True,
    )


def update_memory(
    agent_id: str,
    memory_id: str,
    *,
    content: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    reason: str | None = None,
    ttl_seconds: int | None = None,
    expires_at: datetime | None = None,
) -> Call[models.MemoryAccepted]:
    """Not retry-safe: a repeat after a lost answer is a 409 naming the version it wrote."""
    body: dict[str, Any] = {
        **only_set({"content": content, "reason": reason, "ttl_seconds": ttl_seconds})
    }
    if metadata is not None:
        body["metadata"] = dict(metadata)
    if expires_at is not None:
        body["expires_at"] = expires_at.isoformat()
    return Call(
        "PATCH",
        f"/v1/agents/{segment(agent_id)}/memories/{segment(memory_id)}",
        models.MemoryAccepted.model_validate,
        json=body,
    )


def memory_history(agent_id: str, memory_id: str) -> Call[models.MemoryHistory]:
    """Every version of the memory's chain, oldest first."""
    return Call(
        "GET",
        f"/v1/agents/{segment(agent_id)}/memories/{segment(memory_id)}/history",
        models.MemoryHistory.model_validate,
        retry_safe=True,
    )


def get_retention(agent_id: str) -> Call[models.Retention]:
    """The agent's own retention rules and the deployment's defaults for other types."""
    return Call(
        "GET",
        f"/v1/agents/{segment(agent_id)}/retention",
        models.Retention.model_validate,
        retry_safe=True,
    )


def set_retention(agent_id: str, rules: Sequence[Mapping[str, Any]]) -> Call[models.Retention]:
    """Replace the agent's rules whole; retry-safe (a repeat sets the same rules)."""
    return Call(
        "PUT",
        f"/v1/agents/{segment(agent_id)}/retention",
        models.Retention.model_validate,
        json={"rules": [dict(rule) for rule in rules]},
        retry_safe=True,
    )


def _selection(
    *,
    search: str | None,
    type: str | None,
    status: str | None,
    user_id: str | None,
    session_id: str | None,
    filter: Mapping[str, Any] | None,
) -> dict[str, str | int | float | bool]:
    """Which memories a listing or a count covers, as query parameters (unset ones left out)."""
    return only_set(
        {
            "search": search,
            "type": type,
            "status": status,
            "user_id": user_id,
            "session_id": session_id,
            "filter": filter_json(filter) if filter else None,
        }
    )


def _memories_path(agent_id: str | None) -> str:
    """An agent's memories, or (None) the listing across the caller's own agents."""
    return f"/v1/agents/{segment(agent_id)}/memories" if agent_id else "/v1/memories"


def list_memories(
    agent_id: str | None,
    *,
    search: str | None = None,
    type: str | None = None,
    status: str | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
    filter: Mapping[str, Any] | None = None,
    cursor: str | None = None,
    limit: int | None = None,
    order: str | None = None,
) -> Call[models.MemoryPage]:
    """One page of an agent's memories, or (agent_id=None) across the caller's own agents;
    `cursor` is the previous page's `next_cursor`, which is None after the last page."""
    params = _selection(
        search=search,
        type=type,
        status=status,
        user_id=user_id,
        session_id=session_id,
        filter=filter,
    ) | only_set({"cursor": cursor, "limit": limit, "order": order})
    return Call(
        "GET",
        _memories_path(agent_id),
        models.MemoryPage.model_validate,
        params=params,
        retry_safe=True,
    )


def count_memories(
    agent_id: str,
    *,
    search: str | None = None,
    type: str | None = None,
    status: str | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
    filter: Mapping[str, Any] | None = None,
) -> Call[models.MemoryCount]:
    """How many memories the same listing would walk, in total, by status and by type."""
    params = _selection(
        search=search,
        type=type,
        status=status,
        user_id=user_id,
        session_id=session_id,
        filter=filter,
    )
    return Call(
        "GET",
        f"/v1/agents/{segment(agent_id)}/memories:count",
        models.MemoryCount.model_validate,
        params=params,
        retry_safe=True,
    )


def delete_memory(agent_id: str, memory_id: str) -> Call[models.Memory]:
    """Withdraw one memory; the answer is its id and new status."""
    return Call(
        "DELETE",
        f"/v1/agents/{segment(agent_id)}/memories/{segment(memory_id)}",
        models.Memory.model_validate,
        retry_safe=True,
    )


def clear_memories(
    agent_id: str, *, user_id: str | None = None, session_id: str | None = None
) -> Call[models.MemoriesCleared]:
    """Withdraw the agent's memories of one user and/or session, or every one without either."""
    scope = only_set({"user_id": user_id, "session_id": session_id})
    return Call(
        "DELETE",
        f"/v1/agents/{segment(agent_id)}/memories",
        models.MemoriesCleared.model_validate,
        params=scope or None,
        retry_safe=True,
    )


def recall(
    agent_id: str,
    query: str,
    *,
    top_k: int,
    min_score: float | None,
    types: Sequence[str] | None,
    include_statuses: Sequence[str] | None = None,
    mode: str | None = None,
    filter: Mapping[str, Any] | None = None,
    recency_half_life_days: float | None = None,
) -> Call[models.Recall]:
    """A read despite the POST, so it is retry-safe; only the options given are sent, so the
    gateway's defaults apply to the rest."""
    body: dict[str, Any] = {"query": query, "top_k": top_k}
    body |= only_set(
        {"min_score": min_score, "mode": mode, "recency_half_life_days": recency_half_life_days}
    )
    if types:
        body["types"] = list(types)
    if include_statuses:
        body["include_statuses"] = list(include_statuses)
    if filter:
        body["filter"] = json.loads(filter_json(filter))
    return Call(
        "POST",
        f"/v1/agents/{segment(agent_id)}/recall",
        models.Recall.model_validate,
        json=body,
        retry_safe=True,
    )
