"""How a memory row looks through the API: ids, status, provenance, timestamps (content if held)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

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


MESSAGE_FIELDS = ("index", "role", "name", "at", "content", "content_sha256", "chars")
FACT_FIELDS = (
    "index",
    "content",
    "content_sha256",
    "decision",
    "supersedes",
    "known_as",
    "candidates",
    "model",
    "output_sha256",
)


def conversation_view(record: dict[str, Any], rows: dict[str, MemoryRow]) -> dict[str, Any]:
    """A conversation through the API: each message and each fact with what became of it (the
    memory it wrote and that memory's status, or why it wrote none), and `settled` once
    processing is over and no memory it wrote is still pending."""
    messages = []
    for m in record.get("messages") or []:
        shown = {k: m.get(k) for k in MESSAGE_FIELDS if k in m}
        if m.get("memory_id") and record.get("mode") != "model":
            shown.update(outcome="memory", **_memory_outcome(m["memory_id"], rows))
        elif m.get("role") in ("system", "tool"):
            shown["outcome"] = "kept"
        elif record.get("mode") == "model":
            shown["outcome"] = "read_by_model"
        else:
            shown["outcome"] = "no_content"
        messages.append(shown)
    facts = []
    for f in record.get("facts") or []:
        shown = {k: f.get(k) for k in FACT_FIELDS if k in f and f.get(k) is not None}
        if f.get("decision") in ("add", "supersede"):
            shown.update(_memory_outcome(f["memory_id"], rows))
        facts.append(shown)
    written = [x["memory_status"] for x in [*messages, *facts] if "memory_status" in x]
    by_status: dict[str, int] = {}
    for status in written:
        by_status[str(status)] = by_status.get(str(status), 0) + 1
    status = record.get("status")
    return {
        "conversation_id": record["conversation_id"],
        "agent_id": record["agent_id"],
        "user_id": record.get("user_id"),
        "session_id": record.get("session_id"),
        "metadata": record.get("metadata") or {},
        "mode": record.get("mode"),
        "status": status,
        "error": record.get("error"),
        "settled": status in ("failed", "deleted")
        or (status == "processed" and not by_status.get("pending")),
        "memories": by_status,
        "model_calls": record.get("model_calls", 0),
        "extraction": record.get("extraction"),
        "messages": messages,
        "facts": facts if record.get("mode") == "model" else None,
        "created_at": record.get("created_at"),
        "updated_at": record.get("updated_at"),
        "deleted_at": record.get("deleted_at"),
    }


def conversation_memory_ids(record: dict[str, Any]) -> list[str]:
    """Every memory a conversation asked for (messages without a model, else the facts kept)."""
    if record.get("mode") == "model":
        return [
            f["memory_id"]
            for f in record.get("facts") or []
            if f.get("decision") in ("add", "supersede")
        ]
    return [m["memory_id"] for m in record.get("messages") or [] if m.get("memory_id")]
