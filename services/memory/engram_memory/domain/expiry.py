"""Expiry, the pure part: a live memory past its `expires_at` reads as `expired` at once, before
the sweeper has marked it, so the bound on leaving recall and listings is the read itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from engram_platform.audit import SYSTEM_ACTOR, AuditEntry, audit_time, entry_id_for

if TYPE_CHECKING:
    from engram_memory.domain.rows import MemoryRow

EXPIRABLE_STATUSES = ("pending", "active", "superseded")
"""Stored statuses that read as `expired` once `expires_at` has passed."""


def aware(moment: datetime) -> datetime:
    """Mongo hands datetimes back naive (UTC); comparisons need them aware."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def instant(value: Any) -> datetime | None:
    """A row's or a point's `expires_at` (a datetime, or ISO text in a payload) as an instant."""
    if isinstance(value, datetime):
        return aware(value)
    if isinstance(value, str) and value:
        return aware(datetime.fromisoformat(value))
    return None


def lapsed(row: Mapping[str, Any], now: datetime) -> bool:
    """Whether a stored document or a point's payload is past its expiry while still live."""
    if row.get("status") not in EXPIRABLE_STATUSES:
        return False
    expires = instant(row.get("expires_at"))
    return expires is not None and expires <= now


def effective_status(row: Mapping[str, Any], now: datetime) -> str:
    """The status a reader sees: `expired` for a lapsed live row, else the stored one."""
    return "expired" if lapsed(row, now) else str(row.get("status"))


def status_clauses(statuses: Sequence[str], now: datetime) -> list[dict[str, Any]]:
    """Mongo clauses (any of them) selecting rows whose effective status is one of these."""
    wanted = list(dict.fromkeys(statuses))
    expirable = [s for s in wanted if s in EXPIRABLE_STATUSES]
    others = [s for s in wanted if s not in EXPIRABLE_STATUSES]
    clauses: list[dict[str, Any]] = []
    if others:
        clauses.append({"status": {"$in": others}})
    if expirable:
        unexpired = [{"expires_at": None}, {"expires_at": {"$gt": now}}]
        clauses.append({"status": {"$in": expirable}, "$or": unexpired})
    if "expired" in wanted:
        clauses.append({"status": {"$in": list(EXPIRABLE_STATUSES)}, "expires_at": {"$lte": now}})
    return clauses


def expired_fields(at: datetime) -> dict[str, Any]:
    """What the sweeper records on a lapsed row; its content stays for audit until pruned."""
    return {"status": "expired", "expired_at": at}


def expiry_entries(rows: Sequence[MemoryRow], at: datetime) -> list[AuditEntry]:
    """One audit entry per memory the sweeper expires, its id derived from the memory, so a
    sweep repeated after a crash records each memory once."""
    return [
        AuditEntry(
            entry_id=entry_id_for(row.tenant_id, "memory.expired", row.memory_id),
            tenant_id=row.tenant_id,
            at=audit_time(at),
            actor=SYSTEM_ACTOR,
            action="memory.expired",
            target={"agent_id": row.agent_id, "memory_id": row.memory_id},
        )
        for row in rows
    ]
