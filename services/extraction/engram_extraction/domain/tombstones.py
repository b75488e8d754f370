"""Why a record is tombstoned, and what its head keeps once it is a marker."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

Reason = Literal["prune", "document_deleted", "drive_removed", "absent_from_version"]
DRIVE_REASONS = frozenset({"drive_trashed", "drive_removed", "permission_lost"})


def deletion_reason(document_reason: str) -> Reason:
    """Records of a document the drive took away say so; any other deletion is a deletion."""
    return "drive_removed" if document_reason in DRIVE_REASONS else "document_deleted"


def marker(reason: Reason, prune_job_id: str | None) -> dict[str, Any]:
    """What a tombstoned head keeps besides its ids and hashes: when, why, and which job."""
    return {"tombstoned_at": datetime.now(UTC), "reason": reason, "prune_job_id": prune_job_id}


def same_job(head: dict[str, Any], prune_job_id: str | None) -> bool:
    """A marker this prune job left (found again when its request is replayed)."""
    return (
        prune_job_id is not None
        and head.get("status") == "tombstoned"
        and head.get("prune_job_id") == prune_job_id
    )
