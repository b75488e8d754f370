"""A memory's versions, the pure part: which rows belong to one chain and how a version shows.

A chain links versions by `supersedes` (set when the newer row opens) and `superseded_by` (set
on the older row once the newer is stored); a newer row still pending is found by its
`supersedes` alone. A chain never leaves its agent, never loops and is bounded in length.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from engram_memory.domain.rows import MemoryRow

MAX_VERSIONS = 200
"""How many versions a history walks at most (older and newer together)."""

VERSION_FIELDS = (
    "memory_id",
    "status",
    "type",
    "content",
    "metadata",
    "created_at",
    "stored_at",
    "supersedes",
    "superseded_by",
    "author",
    "edit_reason",
    "reason",
    "duplicate_of",
    "withdrawn_reason",
    "expires_at",
)


def in_chain(row: MemoryRow | None, agent_id: str, seen: set[str]) -> bool:
    """A linked row joins the chain only if it is the same agent's and not already in it."""
    return row is not None and row.agent_id == agent_id and row.memory_id not in seen


def earliest_successor(rows: Sequence[MemoryRow], older_id: str) -> MemoryRow | None:
    """The newer version of a row whose `superseded_by` is not yet set: the earliest row naming
    it in `supersedes` (two only when a write raced an edit, and the earliest is stored first)."""
    named = [r for r in rows if r.supersedes == older_id]
    return min(named, key=lambda r: (r.created_at, r.memory_id), default=None)


def version_view(row: MemoryRow) -> dict[str, Any]:
    """One version through the API: who wrote it (key id and role, never the secret), when and
    why (`edit_reason`); content and metadata only while the row still holds them; `expired`
    from the moment it lapses."""
    view = {name: getattr(row, name) for name in VERSION_FIELDS}
    view["status"] = row.effective_status(datetime.now(UTC))
    return view
