"""A stored document and its versions' extract log, as ingest reads them back (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class ExtractEntry:
    """One version's extraction: `pending`, `extracted` with counts, or `failed` with why."""

    version: str
    status: str = "pending"
    attempts: int = 0
    last_error: str | None = None
    record_count: int = 0
    rejected_count: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True)
class StoredDocument:
    """A document's latest name, type and source, whether it is deleted, and each version's
    extract-log entry (in the order the versions arrived)."""

    document_id: str
    status: str
    latest_version: str | None = None
    name: str | None = None
    mime: str | None = None
    source: str | None = None
    extract_log: dict[str, ExtractEntry] = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def latest(self) -> ExtractEntry | None:
        """The latest version's extraction, when its entry exists."""
        return self.extract_log.get(self.latest_version or "")

    @property
    def public_status(self) -> str:
        """`deleted`, else the latest version's extraction status (`pending` before any)."""
        if self.status == "deleted":
            return "deleted"
        return self.latest.status if self.latest else "pending"
