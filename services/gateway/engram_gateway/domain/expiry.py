"""A memory's expiry as a caller gives it: `ttl_seconds` or `expires_at`, ahead and bounded."""

from __future__ import annotations

from datetime import datetime, timedelta

MAX_TTL_SECONDS = 3650 * 86_400
"""The furthest a memory's expiry may lie: ten years."""


def expiry_problem(
    ttl_seconds: int | None, expires_at: datetime | None, now: datetime
) -> str | None:
    """Why this expiry is refused, or None: both given, or an `expires_at` past or too far."""
    if ttl_seconds is not None and expires_at is not None:
        return "give ttl_seconds or expires_at, not both"
    if expires_at is not None and expires_at <= now:
        return "expires_at must be in the future"
    if expires_at is not None and expires_at > now + timedelta(seconds=MAX_TTL_SECONDS):
        return "expires_at must be at most ten years away"
    return None


def expiry(ttl_seconds: int | None, expires_at: datetime | None, now: datetime) -> datetime | None:
    """The instant it expires: `ttl_seconds` counted from `now`, else `expires_at` as given."""
    return now + timedelta(seconds=ttl_seconds) if ttl_seconds is not None else expires_at
