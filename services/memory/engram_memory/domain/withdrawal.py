"""Withdrawal, the pure part: which statuses are live and what a withdrawn row records."""

from __future__ import annotations

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
