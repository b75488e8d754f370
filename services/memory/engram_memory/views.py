"""How a memory row looks through the API: ids, status, provenance, timestamps (content if held)."""

from __future__ import annotations

from typing import Any

PUBLIC_FIELDS = (
    "memory_id",
    "agent_id",
    "user_id",
    "session_id",
    "type",
    "status",
    "content",
    "content_sha256",
    "metadata",
    "derived_from",
    "supersedes",
    "superseded_by",
    "provenance",
    "reason",
    "duplicate_of",
    "withdrawn_reason",
    "created_at",
    "updated_at",
    "stored_at",
    "withdrawn_at",
)


def memory_view(row: dict[str, Any]) -> dict[str, Any]:
    """A row without storage details (`_id`, the tenant, pending outbox entries)."""
    return {name: row.get(name) for name in PUBLIC_FIELDS if name in row}
