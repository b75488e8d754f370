"""Withdrawal, the pure part: which statuses are live and what a withdrawn row records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

LIVE_STATUSES = ("pending", "active", "superseded", "expired")
"""A memory that can still be withdrawn: written, about to be, replaced but kept, or expired
(kept for audit with its content until pruned or deleted)."""


def withdrawn_fields(reason: str, at: datetime, because_of: str | None = None) -> dict[str, Any]:
    """What a withdrawn row records about why it left."""
    return {
        "status": "withdrawn",
        "withdrawn_reason": reason,
        "withdrawn_because_of": because_of,
        "withdrawn_at": at,
    }


def stored_meanwhile(withdrawn: Iterable[Mapping[str, Any]]) -> list[str]:
    """The withdrawn memories whose vector a write in flight may have stored since their points
    were removed: those that were pending. Their points are removed once more."""
    return [str(row["memory_id"]) for row in withdrawn if row.get("status") == "pending"]
