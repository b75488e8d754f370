"""Editing a memory, the pure part: which versions may be edited and what the new version holds.

An edit writes a new memory that supersedes the old one. It keeps the old memory's agent, type,
user, session and sources; `content` replaces the content when given, `metadata` replaces the
whole metadata object when given (no merge: send every key to keep). Content is deduplicated as
any write's is, against every live memory but the one it replaces: an edit of the metadata alone
restates the old content and is no duplicate, an edit to content another live memory already
holds is one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram_events.payloads.memories import Author, MemoryWriteRequested
from engram_gateway.domain.access import role_of
from engram_gateway.domain.model import Caller

EDITABLE = "active"
"""Only a stored, live version is edited: a pending one has no vector yet, a superseded one has a
newer version to edit instead, a withdrawn or rejected one is gone."""


@dataclass(frozen=True)
class Change:
    """What an edit asks for: new content, metadata and/or expiry, and why."""

    content: str | None
    metadata: dict[str, Any] | None
    reason: str | None
    expires_at: datetime | None = None
    """A new expiry; None keeps the old one (an edit never removes an expiry)."""


@dataclass(frozen=True)
class Refusal:
    """Why a version cannot be edited: the status it has and its newer version, if any."""

    status: str
    detail: str
    superseded_by: str | None = None


def author_of(caller: Caller) -> Author:
    """The key that asked, by id and role (the secret is never known here)."""
    return Author(key_id=caller.key_id, role=role_of(caller.roles))


def refusal(old: dict[str, Any]) -> Refusal | None:
    """None when this version may be edited; else the 409 it earns."""
    status = str(old.get("status"))
    newer = old.get("superseded_by")
    if newer:
        return Refusal(status, f"the memory was superseded by {newer}; edit that one", newer)
    if status == EDITABLE:
        return None
    if status == "pending":
        return Refusal(status, "the memory is still being stored; retry when it is active")
    return Refusal(status, f"a {status} memory cannot be edited")


def edited(
    old: dict[str, Any], change: Change, *, memory_id: str, author: Author
) -> MemoryWriteRequested:
    """The new version's write: the old memory's agent, type, scope and sources, the change's
    content, metadata and expiry (or the old ones), superseding the old memory."""
    return MemoryWriteRequested(
        memory_id=memory_id,
        agent_id=old["agent_id"],
        content=change.content if change.content is not None else old["content"],
        type=old["type"],
        metadata=change.metadata if change.metadata is not None else old.get("metadata") or {},
        derived_from=list(old.get("derived_from") or []),
        supersedes=old["memory_id"],
        user_id=old.get("user_id"),
        session_id=old.get("session_id"),
        author=author,
        reason=change.reason,
        expires_at=change.expires_at or old.get("expires_at"),
    )


def with_pending_newer(versions: list[dict[str, Any]], newer: str | None) -> list[dict[str, Any]]:
    """The chain the memory service knows, plus the newer version the gateway queued and the
    memory service has not opened yet (shown `pending`)."""
    if newer is None or any(v.get("memory_id") == newer for v in versions):
        return versions
    last = versions[-1]["memory_id"] if versions else None
    return [*versions, {"memory_id": newer, "status": "pending", "supersedes": last}]
