"""Why a record is tombstoned, and what its head keeps once it is a marker."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

Reason = Literal["prune", "document_deleted", "drive_removed", "absent_from_version"]
DRIVE_REASONS = frozenset({"drive_trashed", "drive_removed", "permission_lost"})


def deletion_reason(document_reason: str) -> Reason:
    """Records of a document the drive took away say so; any other deletion is a deletion."""
    return "drive_removed" if document_reason in DRIVE_REASONS else "document_deleted"


def marker(reason: Reason, prune_job_id: str | None, cause: str | None = None) -> dict[str, Any]:
    """What a tombstoned head keeps besides its ids and hashes: when, why, which job and which
    event tombstoned it."""
    return {
        "tombstoned_at": datetime.now(UTC),
        "reason": reason,
        "prune_job_id": prune_job_id,
        "tombstoned_by": cause,
    }


def left_by(head: dict[str, Any], prune_job_id: str | None, cause: str) -> bool:
    """A marker this prune job or this very event left, found again when it is replayed (a
    document deleted without a job has only its event to go by)."""
    if head.get("status") != "tombstoned":
        return False
    same_job = prune_job_id is not None and head.get("prune_job_id") == prune_job_id
    return same_job or head.get("tombstoned_by") == cause
