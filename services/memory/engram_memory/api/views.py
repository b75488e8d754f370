"""How a memory row looks through the API: ids, status, provenance, timestamps (content if held)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from engram_memory.domain.conversation_records import ConversationRecord, FactEntry, MessageEntry
from engram_memory.domain.rows import MemoryRow

RECORDED_FIELDS = (
    "memory_id",
    "agent_id",
    "user_id",
    "session_id",
    "type",
    "status",
    "content_sha256",
    "derived_from",
    "supersedes",
    "created_at",
    "updated_at",
)
"""Shown for every memory (null where unset): every row records them when it opens."""
HELD_FIELDS = (
    "content",
    "metadata",
    "superseded_by",
    "provenance",
    "reason",
    "duplicate_of",
    "withdrawn_reason",
    "author",
    "edit_reason",
    "stored_at",
    "withdrawn_at",
    "expires_at",
    "expired_at",
)
"""Shown while the row holds them: content until withdrawn, how it ended once it has."""


def memory_view(row: MemoryRow) -> dict[str, Any]:
    """A row without storage details (`_id`, the tenant, pending outbox entries); a memory a
    model wrote names that model, its decision and the conversation in `provenance.extracted_by`;
    a live memory past its `expires_at` reads `expired` before the sweeper has marked it."""
    view: dict[str, Any] = {name: getattr(row, name) for name in RECORDED_FIELDS}
    view["derived_from"] = list(row.derived_from)
    view["status"] = row.effective_status(datetime.now(UTC))
    view.update(
        {name: getattr(row, name) for name in HELD_FIELDS if getattr(row, name) is not None}
    )
    if row.extracted_by:
        view["provenance"] = {**(row.provenance or {}), "extracted_by": row.extracted_by}
    return view


def _memory_outcome(memory_id: str | None, rows: dict[str, MemoryRow]) -> dict[str, Any]:
    """What became of a memory a conversation asked for (`pending` until the row exists)."""
    if memory_id is None:
        return {}
    row = rows.get(memory_id)
    status = row.effective_status(datetime.now(UTC)) if row else "pending"
    outcome: dict[str, Any] = {"memory_id": memory_id, "memory_status": status}
    if row is None:
        return outcome
    ended = {
        "reason": row.reason,
        "duplicate_of": row.duplicate_of,
        "superseded_by": row.superseded_by,
        "withdrawn_reason": row.withdrawn_reason,
    }
    outcome.update({name: value for name, value in ended.items() if value})
    return outcome


FACT_FIELDS = (
    "supersedes",
    "known_as",
    "candidates",
    "model",
    "output_sha256",
)
"""A decided fact's fields beside its decision (each shown when set)."""


def _message_view(
    message: MessageEntry, record: ConversationRecord, rows: dict[str, MemoryRow]
) -> dict[str, Any]:
    """A message and what became of it; a deleted conversation's messages show no content."""
    shown: dict[str, Any] = {
        "index": message.index,
        "role": message.role,
        "name": message.name,
        "at": message.at,
        "content": message.content,
        "content_sha256": message.content_sha256,
        "chars": message.chars,
    }
    if record.status == "deleted":
        del shown["content"]
    if message.memory_id and record.mode != "model":
        shown.update(outcome="memory", **_memory_outcome(message.memory_id, rows))
    elif message.role in ("system", "tool"):
        shown["outcome"] = "kept"
    elif record.mode == "model":
        shown["outcome"] = "read_by_model"
    else:
        shown["outcome"] = "no_content"
    return shown


def _fact_view(fact: FactEntry, rows: dict[str, MemoryRow]) -> dict[str, Any]:
    """A fact, its decision and what became of the memory it wrote (fields shown when set)."""
    shown: dict[str, Any] = {"index": fact.index}
    if fact.content is not None:
        shown["content"] = fact.content
    shown["content_sha256"] = fact.content_sha256
    if fact.decision is None:
        return shown
    decided = fact.decision
    shown["decision"] = decided.action
    for name in FACT_FIELDS:
        value = getattr(decided, name)
        if value is not None:
            shown[name] = list(value) if name == "candidates" else value
    if fact.written:
        shown.update(_memory_outcome(fact.memory_id, rows))
    return shown


def conversation_view(record: ConversationRecord, rows: dict[str, MemoryRow]) -> dict[str, Any]:
    """A conversation through the API: each message and each fact with what became of it (the
    memory it wrote and that memory's status, or why it wrote none), and `settled` once
    processing is over and no memory it wrote is still pending."""
    messages = [_message_view(m, record, rows) for m in record.messages]
    facts = [_fact_view(f, rows) for f in record.facts or ()]
    written = [x["memory_status"] for x in [*messages, *facts] if "memory_status" in x]
    by_status: dict[str, int] = {}
    for status in written:
        by_status[str(status)] = by_status.get(str(status), 0) + 1
    status = record.status
    return {
        "conversation_id": record.conversation_id,
        "agent_id": record.agent_id,
        "user_id": record.user_id,
        "session_id": record.session_id,
        "metadata": dict(record.metadata or {}),
        "mode": record.mode,
        "status": status,
        "error": record.error,
        "settled": status in ("failed", "deleted")
        or (status == "processed" and not by_status.get("pending")),
        "memories": by_status,
        "model_calls": record.model_calls,
        "extraction": None if record.extraction is None else asdict(record.extraction),
        "messages": messages,
        "facts": facts if record.mode == "model" else None,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "deleted_at": record.deleted_at,
    }
