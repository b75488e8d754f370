"""Why a record is tombstoned, and what its head keeps once it is a marker."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from engram_extraction.domain.heads import RecordHead

Reason = Literal["prune", "document_deleted", "drive_removed", "absent_from_version"]
DRIVE_REASONS = frozenset({"drive_trashed", "drive_removed", "permission_lost"})


def deletion_reason(document_reason: str) -> Reason:
    """Records of a document the drive took away say so; any other deletion is a deletion."""
    return "drive_removed" if document_reason in DRIVE_REASONS else "document_deleted"


@dataclass(frozen=True, slots=True)
class Marker:
    """What a tombstoned head keeps besides its ids and hashes: when, why, which job and which
    event tombstoned it."""

    tombstoned_at: datetime
    reason: Reason
    prune_job_id: str | None = None
    tombstoned_by: str | None = None


def marker(reason: Reason, prune_job_id: str | None, cause: str | None = None) -> Marker:
    """The marker a tombstoning leaves now."""
    return Marker(datetime.now(UTC), reason, prune_job_id, cause)


def left_by(head: RecordHead, prune_job_id: str | None, cause: str) -> bool:
    """A marker this prune job or this very event left, found again when it is replayed (a
    document deleted without a job has only its event to go by)."""
    if not head.tombstoned:
        return False
    same_job = prune_job_id is not None and head.prune_job_id == prune_job_id
    return same_job or head.tombstoned_by == cause
