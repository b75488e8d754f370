"""A memory's row as the service reads it: typed fields, mapped from storage in `adapters/rows.py`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram_memory.domain.expiry import EXPIRABLE_STATUSES, aware


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """One memory of one tenant: ids, scope, status, hashes, content while held, provenance,
    supersession and how it ended (the first seven every row records; any other field the row
    never recorded reads None)."""

    tenant_id: str
    memory_id: str
    agent_id: str
    status: str
    type: str
    content_sha256: str
    created_at: datetime
    user_id: str | None = None
    session_id: str | None = None
    derived_from: tuple[str, ...] = ()
    supersedes: str | None = None
    superseded_by: str | None = None
    idempotency_key: str | None = None
    written_by: str | None = None
    content: str | None = None
    content_chars: int | None = None
    metadata: Mapping[str, Any] | None = None
    metadata_at: Mapping[str, Any] | None = None
    edit_reason: str | None = None
    author: Mapping[str, Any] | None = None
    extracted_by: Mapping[str, Any] | None = None
    provenance: Mapping[str, Any] | None = None
    reason: str | None = None
    duplicate_of: str | None = None
    dead_lettered_at: datetime | None = None
    withdrawn_reason: str | None = None
    withdrawn_because_of: str | None = None
    withdrawn_cause: str | None = None
    withdrawn_from: str | None = None
    updated_at: datetime | None = None
    stored_at: datetime | None = None
    withdrawn_at: datetime | None = None
    expires_at: datetime | None = None
    expired_at: datetime | None = None

    def lapsed(self, now: datetime) -> bool:
        """Past its expiry while still stored as live."""
        if self.status not in EXPIRABLE_STATUSES or self.expires_at is None:
            return False
        return aware(self.expires_at) <= now

    def effective_status(self, now: datetime) -> str:
        """The status a reader sees: `expired` for a lapsed live row, else the stored one."""
        return "expired" if self.lapsed(now) else self.status

    @property
    def fingerprint(self) -> str | None:
        """The embedder space its vector was stored in, once stored."""
        found = (self.provenance or {}).get("fingerprint")
        return None if found is None else str(found)
