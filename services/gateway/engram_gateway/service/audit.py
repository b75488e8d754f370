"""The audit log's use cases: recording an action before it is answered, and the tenant's
admin listing every entry, the gateway's and the memory service's, as one log."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime

from engram_gateway.domain.audit import entry_of
from engram_gateway.domain.model import Caller
from engram_gateway.ports import AuditStore, OwningServices
from engram_platform.audit import (
    ACTIONS,
    MEMORY_ACTIONS,
    Action,
    AuditEntry,
    AuditPageRequest,
    AuditQuery,
    encode_cursor,
    newest_first,
)
from engram_platform.problems import Problem

log = logging.getLogger(__name__)
GATEWAY_ACTIONS = frozenset(ACTIONS) - MEMORY_ACTIONS
AUDIT_QUERY_PATH = "/internal/v1/audit/query"


def _now() -> datetime:
    return datetime.now(UTC)


class AuditTrail:
    """Records the gateway's audited actions and lists the tenant's whole log."""

    def __init__(
        self, store: AuditStore, owners: OwningServices, now: Callable[[], datetime] = _now
    ) -> None:
        self.store = store
        self.owners = owners
        self.now = now

    async def record(
        self,
        caller: Caller,
        action: Action,
        target: Mapping[str, str],
        *,
        once_per: tuple[str, ...] | None = None,
        counts: Mapping[str, int] | None = None,
        reason: str | None = None,
    ) -> AuditEntry:
        """Write the entry before the action is answered; 503 when it cannot be written, so no
        action is answered 2xx unaudited. `once_per` names what makes a retry the same action
        (a fresh id otherwise)."""
        entry = entry_of(
            caller,
            action,
            target,
            self.now(),
            once_per=once_per or (uuid.uuid4().hex,),
            counts=counts,
            reason=reason,
        )
        try:
            await self.store.record([entry])
        except Exception as exc:
            log.warning(
                "audit entry not written",
                extra={
                    "action": action,
                    "entry_id": entry.entry_id,
                    "error_type": type(exc).__name__,
                },
            )
            raise Problem(
                503, "audit-unavailable", "the action could not be audited; retry"
            ) from None
        return entry

    async def page(self, tenant_id: str, query: AuditQuery) -> tuple[list[AuditEntry], str | None]:
        """Up to `query.limit` entries of both logs, newest first, and the cursor past the last
        when there are more: each log answers one more than the page, before the same position,
        so the merged page and its cursor are those of one log."""
        probe = replace(query, limit=query.limit + 1)
        pages = []
        if query.wants(GATEWAY_ACTIONS):
            pages.append(await self.store.page(tenant_id, probe))
        if query.wants(MEMORY_ACTIONS):
            pages.append(await self._memory_page(tenant_id, probe))
        merged = newest_first(pages, probe.limit)
        shown = merged[: query.limit]
        more = len(merged) > query.limit
        return shown, encode_cursor(shown[-1]) if more and shown else None

    async def _memory_page(self, tenant_id: str, query: AuditQuery) -> list[AuditEntry]:
        body = AuditPageRequest.of(query).model_dump(mode="json")
        response = await self.owners.request(
            "memory", "POST", AUDIT_QUERY_PATH, tenant_id=tenant_id, json=body
        )
        if response.status_code != 200:
            raise Problem(503, "service-unavailable", "the memory service could not answer")
        return [AuditEntry.model_validate(found) for found in response.json()["entries"]]
