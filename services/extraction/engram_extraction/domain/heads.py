"""A record's head as tombstoning reads it: ids, where it came from, status, revision and hash
and, once it is a marker, why and by whom; mapped from storage in `adapters/mapping.py`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

TOMBSTONED = "tombstoned"


@dataclass(frozen=True, slots=True)
class RecordHead:
    """One record's current head (its attributes stay in storage: tombstoning never reads
    them)."""

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

    @property
    def tombstoned(self) -> bool:
        """Already a marker."""
        return self.status == TOMBSTONED
