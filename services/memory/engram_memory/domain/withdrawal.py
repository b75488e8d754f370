"""Withdrawal, the pure part: which statuses are live and what a withdrawn row records."""

from __future__ import annotations

from datetime import datetime
from typing import Any

LIVE_STATUSES = ("pending", "active", "superseded")
"""A memory that can still be withdrawn: written, about to be, or replaced but kept."""


def withdrawn_fields(reason: str, at: datetime, because_of: str | None = None) -> dict[str, Any]:
    """What a withdrawn row records about why it left."""
    return {
        "status": "withdrawn",
        "withdrawn_reason": reason,
        "withdrawn_because_of": because_of,
        "withdrawn_at": at,
    }
