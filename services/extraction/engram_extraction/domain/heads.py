"""A record's head as the service reads it: ids, where it came from, status, revision, hash and
attributes (by name) and, once it is a marker, why and by whom; with its history when read for
the API. Mapped from storage in `adapters/mapping.py`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

TOMBSTONED = "tombstoned"


@dataclass(frozen=True, slots=True)
class RecordRevision:
    """One revision in a record's history: hashes, when and where from, never the content."""

    revision: int
    content_sha256: str
    observed_at: datetime | None = None
    lineage: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RecordHead:
    """One record's current head; a marker has no attributes; `revisions` is its history when
    it was read with it."""

    tenant_id: str
    record_id: str
    status: str
    content_sha256: str
    revision: int = 1
    record_type: str | None = None
    entity_id: str | None = None
    source_item: str | None = None
    document_id: str | None = None
    lineage: Mapping[str, Any] | None = None
    updated_at: datetime | None = None
    tombstoned_at: datetime | None = None
    reason: str | None = None
    prune_job_id: str | None = None
    tombstoned_by: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)
    revisions: tuple[RecordRevision, ...] | None = None

    @property
    def tombstoned(self) -> bool:
        """Already a marker."""
        return self.status == TOMBSTONED
