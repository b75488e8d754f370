"""The tenant's audit log (the key needs the `admin` role)."""

from __future__ import annotations

from datetime import datetime

from engram_client import models
from engram_client.calls.base import Call, only_set


def list_audit(
    *,
    action: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    target: str | None = None,
    cursor: str | None = None,
    limit: int | None = None,
) -> Call[models.AuditPage]:
    """One page of audit entries, newest first; follow `next_cursor`. Times need a timezone."""
    params = only_set(
        {
            "action": action,
            "since": None if since is None else since.isoformat(),
            "until": None if until is None else until.isoformat(),
            "target": target,
            "cursor": cursor,
            "limit": limit,
        }
    )
    return Call("GET", "/v1/audit", models.AuditPage.model_validate, params=params, retry_safe=True)
