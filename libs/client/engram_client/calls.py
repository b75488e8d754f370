"""Every public endpoint as a `Call`: built once per logical request, run by the sync or async client.

`retry_safe` marks what may be sent again after a timeout, a 429 or a 503:
reads; POSTs that only read (recall, knowledge search); DELETEs; memory writes
and record imports (they carry an idempotency key, generated here once and
reused on every retry); document uploads (the gateway keys them by name and
content hash, so a repeat is the same version); DLQ replays (each letter is
replayed once; a repeat answers `already_replayed`). Creating an agent, starting a
prune, deleting a document and resolving a contradiction are not repeated
except when the connection failed before the request was sent.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from engram_client import models

T = TypeVar("T")
Params = Mapping[str, str | int | float | bool]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP exchange and how to read its answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Params | None = None
    json: Any = None
    data: dict[str, str] | None = None
    files: dict[str, tuple[str, bytes, str]] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    retry_safe: bool = False
    authenticated: bool = True


def new_idempotency_key() -> str:
    """A fresh key for one logical write; retries of that write reuse it."""
    return uuid.uuid4().hex


def segment(value: str) -> str:
    """An id as one path segment (entity ids keep their `type:key` colon readable)."""
    return quote(value, safe=":@")


def _none(_: Any) -> None:
    return None


def _only(params: Mapping[str, Any]) -> dict[str, str | int | float | bool]:
    """Query parameters without the ones left unset."""
    return {k: v for k, v in params.items() if v is not None}


def _timestamp(value: Any) -> str:
    """A datetime or date range bound as the ISO-8601 text the filter takes."""
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"a memory filter holds JSON values and timestamps, not {type(value).__name__}")


def _filter_json(filter: Mapping[str, Any]) -> str:
    """A memory filter as compact JSON (datetimes as ISO-8601), the listing's `filter` parameter."""
    return json.dumps(filter, separators=(",", ":"), default=_timestamp)


def _keyed(key: str | None) -> tuple[str, dict[str, str]]:
    """The write's idempotency key and the header carrying it."""
    chosen = key or new_idempotency_key()
    return chosen, {"Idempotency-Key": chosen}


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
    return Call("DELETE", f"/v1/agents/{segment(agent_id)}", _none, retry_safe=True)


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
) -> Call[models.MemoryAccepted]:
    """Retry-safe through the idempotency key, generated here when the caller gives none."""
    key, headers = _keyed(idempotency_key)
    body: dict[str, Any] = {
        "content": content,
        "type": type,
        "metadata": dict(metadata or {}),
        "derived_from": list(derived_from or []),
        "idempotency_key": key,
        **_only({"supersedes": supersedes, "user_id": user_id, "session_id": session_id}),
    }
    if allow_duplicate:
        body["allow_duplicate"] = True
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
    """Up to 100 memories in one request, each with `write_memory`'s fields (scope and
    `allow_duplicate` included); each gets an idempotency key here when it has none, so a
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
    key, headers = _keyed(idempotency_key)
    body: dict[str, Any] = {
        "messages": [dict(m) for m in messages],
        "metadata": dict(metadata or {}),
        "idempotency_key": key,
        **_only({"user_id": user_id, "session_id": session_id}),
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
    return _only(
        {
            "search": search,
            "type": type,
            "status": status,
            "user_id": user_id,
            "session_id": session_id,
            "filter": _filter_json(filter) if filter else None,
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
    ) | _only({"cursor": cursor, "limit": limit, "order": order})
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
    scope = _only({"user_id": user_id, "session_id": session_id})
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
    body |= _only(
        {"min_score": min_score, "mode": mode, "recency_half_life_days": recency_half_life_days}
    )
    if types:
        body["types"] = list(types)
    if include_statuses:
        body["include_statuses"] = list(include_statuses)
    if filter:
        body["filter"] = json.loads(_filter_json(filter))
    return Call(
        "POST",
        f"/v1/agents/{segment(agent_id)}/recall",
        models.Recall.model_validate,
        json=body,
        retry_safe=True,
    )


# Documents


def upload_document(
    name: str, content: bytes | str, mime: str, *, multipart: bool
) -> Call[models.DocumentAccepted]:
    """JSON (`text` or `content_base64`) or multipart; retry-safe: keyed by name + content hash."""
    parse = models.DocumentAccepted.model_validate
    if multipart:
        raw = content.encode("utf-8") if isinstance(content, str) else content
        return Call(
            "POST",
            "/v1/documents",
            parse,
            data={"name": name, "mime": mime},
            files={"file": (name, raw, mime)},
            retry_safe=True,
        )
    body: dict[str, Any] = {"name": name, "mime": mime}
    if isinstance(content, str):
        body["text"] = content
    else:
        body["content_base64"] = base64.b64encode(content).decode("ascii")
    return Call("POST", "/v1/documents", parse, json=body, retry_safe=True)


def get_document(document_id: str) -> Call[models.Document]:
    """Status and versions of a document."""
    return Call(
        "GET",
        f"/v1/documents/{segment(document_id)}",
        models.Document.model_validate,
        retry_safe=True,
    )


def delete_document(document_id: str) -> Call[models.PruneJobAccepted]:
    """Not retry-safe: a second delete starts a second job or answers 409 already-deleted."""
    return Call(
        "DELETE", f"/v1/documents/{segment(document_id)}", models.PruneJobAccepted.model_validate
    )


# Records


def import_records(
    record_type: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    source: str,
    key_field: str | None,
    idempotency_key: str | None,
) -> Call[models.ImportAccepted]:
    """Retry-safe: the gateway derives the import id from the idempotency key."""
    key, headers = _keyed(idempotency_key)
    body: dict[str, Any] = {
        "record_type": record_type,
        "source": source,
        "rows": [dict(r) for r in rows],
        "idempotency_key": key,
    }
    if key_field is not None:
        body["key_field"] = key_field
    return Call(
        "POST",
        "/v1/records:import",
        models.ImportAccepted.model_validate,
        json=body,
        headers=headers,
        retry_safe=True,
    )


def get_import(import_id: str) -> Call[models.ImportStatus]:
    """An import's outcome."""
    return Call(
        "GET",
        f"/v1/records:import/{segment(import_id)}",
        models.ImportStatus.model_validate,
        retry_safe=True,
    )


def get_record(record_id: str) -> Call[models.Record]:
    """One record with revisions and lineage."""
    return Call(
        "GET", f"/v1/records/{segment(record_id)}", models.Record.model_validate, retry_safe=True
    )


def list_records(
    *,
    type: str | None = None,
    document_id: str | None = None,
    entity_id: str | None = None,
    cursor: str | None = None,
    limit: int | None = None,
) -> Call[models.RecordPage]:
    """One page of records; follow `next_cursor`."""
    params = _only(
        {
            "type": type,
            "document_id": document_id,
            "entity_id": entity_id,
            "cursor": cursor,
            "limit": limit,
        }
    )
    return Call(
        "GET", "/v1/records", models.RecordPage.model_validate, params=params, retry_safe=True
    )


# Knowledge


def get_entity(entity_id: str, *, include_withdrawn: bool = False) -> Call[models.Entity]:
    """An entity's article and facts."""
    params = {"include_withdrawn": "true"} if include_withdrawn else None
    return Call(
        "GET",
        f"/v1/knowledge/entities/{segment(entity_id)}",
        models.Entity.model_validate,
        params=params,
        retry_safe=True,
    )


def list_entities(
    *, type: str | None = None, after: str | None = None, limit: int | None = None
) -> Call[models.EntityPage]:
    """One page of entities; follow `next_after`."""
    params = _only({"type": type, "after": after, "limit": limit})
    return Call(
        "GET",
        "/v1/knowledge/entities",
        models.EntityPage.model_validate,
        params=params,
        retry_safe=True,
    )


def search_knowledge(
    query: str, *, top_k: int, min_score: float | None, mode: str | None = None
) -> Call[models.KnowledgeSearch]:
    """A read despite the POST, so it is retry-safe."""
    body: dict[str, Any] = {"query": query, "top_k": top_k}
    if min_score is not None:
        body["min_score"] = min_score
    if mode is not None:
        body["mode"] = mode
    return Call(
        "POST",
        "/v1/knowledge/search",
        models.KnowledgeSearch.model_validate,
        json=body,
        retry_safe=True,
    )


def list_contradictions(
    *, status: str | None = None, limit: int | None = None
) -> Call[list[models.Contradiction]]:
    """Contradictions, optionally only `open` or `resolved` ones."""
    return Call(
        "GET",
        "/v1/knowledge/contradictions",
        lambda b: [models.Contradiction.model_validate(c) for c in b["contradictions"]],
        params=_only({"status": status, "limit": limit}),
        retry_safe=True,
    )


def resolve_contradiction(
    contradiction_id: str, *, keep: str | None, value: Any, has_value: bool
) -> Call[models.Resolution]:
    """Not retry-safe: a repeat after success answers 409 already-resolved."""
    body: dict[str, Any] = {"keep": keep} if keep is not None else {}
    if has_value:
        body["value"] = value
    return Call(
        "POST",
        f"/v1/knowledge/contradictions/{segment(contradiction_id)}/resolve",
        models.Resolution.model_validate,
        json=body,
    )


# Prune, lineage, ops


def start_prune(
    *,
    older_than_days: int | None,
    record_ids: Sequence[str] | None,
    filter: Mapping[str, str] | None,
) -> Call[models.PruneJobAccepted]:
    """Not retry-safe: each POST creates a job."""
    body: dict[str, Any] = {}
    if older_than_days is not None:
        body["older_than_days"] = older_than_days
    if record_ids:
        body["record_ids"] = list(record_ids)
    if filter:
        body["filter"] = dict(filter)
    return Call("POST", "/v1/prune", models.PruneJobAccepted.model_validate, json=body)


def get_prune_job(job_id: str, *, full_selector: bool = False) -> Call[models.PruneJob]:
    """Counts, acknowledgements and `verified_empty`; the selector's id lists in full only when
    asked (by default the first 20 of each, with `selector_sizes`)."""
    return Call(
        "GET",
        f"/v1/prune-jobs/{segment(job_id)}",
        models.PruneJob.model_validate,
        params={"selector": "full"} if full_selector else None,
        retry_safe=True,
    )


def lineage(item_id: str) -> Call[models.Lineage]:
    """What an id derives and what it derives from."""
    return Call(
        "GET", f"/v1/lineage/{segment(item_id)}", models.Lineage.model_validate, retry_safe=True
    )


def list_dead_letters() -> Call[list[models.DeadLetter]]:
    """The tenant's DLQ (ops API; the key needs the `ops` role)."""
    return Call(
        "GET",
        "/ops/dlq",
        lambda b: [models.DeadLetter.model_validate(x) for x in b],
        retry_safe=True,
    )


def replay_dead_letters(
    *, letter_id: str | None = None, consumer: str | None = None
) -> Call[dict[str, str]]:
    """Retry-safe: the gateway replays a letter once; a repeat reports `already_replayed`."""
    form = {"letter_id": letter_id} if letter_id else {"consumer": consumer or ""}
    return Call(
        "POST",
        "/ops/dlq/replay",
        lambda b: {str(k): str(v) for k, v in b["results"].items()},
        data=form,
        headers={"Accept": "application/json"},
        retry_safe=True,
    )


def health() -> Call[models.Health]:
    """Liveness; needs no key."""
    return Call(
        "GET", "/healthz", models.Health.model_validate, retry_safe=True, authenticated=False
    )


def ready() -> Call[models.Health]:
    """Readiness with per-dependency checks; needs no key (a 503 raises ServiceUnavailable)."""
    return Call("GET", "/readyz", models.Health.model_validate, authenticated=False)
