"""Audit entries of the gateway's actions, the pure part: who acted and under which id."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from engram_gateway.domain.access import role_of
from engram_gateway.domain.model import Caller
from engram_platform.audit import Action, Actor, AuditEntry, audit_time, entry_id_for, sha256_of


def actor_of(caller: Caller) -> Actor:
    """The key that acted, with the one role it shows."""
    return Actor(kind="key", key_id=caller.key_id, role=role_of(caller.roles))


def entry_of(
    caller: Caller,
    action: Action,
    target: Mapping[str, str],
    at: datetime,
    *,
    once_per: tuple[str, ...],
    counts: Mapping[str, int] | None = None,
    reason: str | None = None,
) -> AuditEntry:
    """An entry of the caller's action, its id derived from `once_per` (the ids that make the
    action one action, so a retry of it is the same entry); a reason only as its sha256."""
    return AuditEntry(
        entry_id=entry_id_for(caller.tenant_id, action, *once_per),
        tenant_id=caller.tenant_id,
        at=audit_time(at),
        actor=actor_of(caller),
        action=action,
        target=dict(target),
        counts=dict(counts or {}),
        reason_sha256=sha256_of(reason),
    )
