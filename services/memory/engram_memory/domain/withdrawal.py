"""Withdrawal, the pure part: which statuses are live and what a withdrawn row records."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from engram_memory.domain.rows import MemoryRow

LIVE_STATUSES = ("pending", "active", "superseded", "expired")
"""A memory that can still be withdrawn: written, about to be, replaced but kept, or expired
(kept for audit with its content until pruned or deleted)."""


def withdrawn_fields(
    reason: str,
    at: datetime,
    because_of: str | None = None,
    *,
    cause: str | None = None,
    was: str | None = None,
) -> dict[str, Any]:
    """What a withdrawn row records about why it left: the reason, the source, when, and, for an
    event's withdrawal, that event and the status the row left (a replay of the event finds the
    row again by them)."""
    return {
        "status": "withdrawn",
        "withdrawn_reason": reason,
        "withdrawn_because_of": because_of,
        "withdrawn_at": at,
        "withdrawn_cause": cause,
        "withdrawn_from": was,
    }


def withdrawn_by_event(row: MemoryRow, cause: str) -> bool:
    """A row this very event withdrew: its replay after a crash announces it again."""
    return row.status == "withdrawn" and row.withdrawn_cause == cause


def withdrawn_by_event_of(tenant_id: str, agent_id: str, cause: str) -> dict[str, Any]:
    """The selection of an agent's rows one event withdrew (found again when it is replayed)."""
    return {
        "tenant_id": tenant_id,
        "agent_id": agent_id,
        "status": "withdrawn",
        "withdrawn_cause": cause,
    }


def held_a_vector(row: MemoryRow) -> bool:
    """Whether the row had a point when it was withdrawn (or has one now)."""
    status = row.withdrawn_from if row.status == "withdrawn" else row.status
    return status in ("active", "superseded")


def stored_meanwhile(withdrawn: Iterable[MemoryRow]) -> list[str]:
    """The withdrawn memories whose vector a write in flight may have stored since their points
    were removed: those that were pending. Their points are removed once more."""
    return [row.memory_id for row in withdrawn if "pending" in (row.status, row.withdrawn_from)]
