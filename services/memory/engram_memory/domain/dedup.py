"""Dedup: one live memory per (agent, scope, normalised content)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from engram_events.content import normalized_sha256
from engram_memory.domain.rows import MemoryRow

LIVE_FOR_DEDUP = ("pending", "active")
"""A memory that still counts as saying this: written or about to be; superseded, withdrawn
and rejected memories leave the slot to the next write."""


def dedup_key(agent_id: str, user_id: str | None, session_id: str | None, content: str) -> str:
    """The slot two writes share when the same agent, in the same scope, says the same thing."""
    seed = "\x1f".join([agent_id, user_id or "", session_id or "", normalized_sha256(content)])
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def is_duplicate_of(holder: MemoryRow | None, supersedes: str | None) -> bool:
    """Whether a slot's holder makes a write a duplicate: it is live (not expired), and not the
    memory the write replaces."""
    if holder is None or holder.status not in LIVE_FOR_DEDUP:
        return False
    if holder.lapsed(datetime.now(UTC)):
        return False
    return holder.memory_id != supersedes
