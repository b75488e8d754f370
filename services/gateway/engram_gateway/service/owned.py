"""Reads an owning service answers, or `pending` while only the gateway knows the write."""

from __future__ import annotations

from typing import Any

from engram_gateway.ports import OwningServices, SubmissionLog
from engram_platform.problems import Problem


class OwnedReads:
    """An item's view from the service that owns it; until that service has it, the gateway's
    own note of the accepted write answers `pending`."""

    def __init__(self, owners: OwningServices, submissions: SubmissionLog) -> None:
        self.owners = owners
        self.submissions = submissions

    async def view_or_pending(
        self,
        tenant_id: str,
        *,
        service: str,
        path: str,
        kind: str,
        item_id: str,
        pending: dict[str, Any],
        with_version: bool = False,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        """The owner's view; else `pending` (with the submitted version, for a document) when
        the write was accepted (for `agent_id`, when named); 404 when it never was, 503 when
        the owner fails."""
        response = await self.owners.request(service, "GET", path, tenant_id=tenant_id)
        if response.status_code == 200:
            found: dict[str, Any] = response.json()
            return found
        if response.status_code != 404:
            raise Problem(503, "service-unavailable", f"the {service} service could not answer")
        submitted = await self.submissions.get(tenant_id, kind, item_id)
        if submitted is None or (agent_id is not None and submitted.agent_id != agent_id):
            raise Problem(404, detail=f"no such {kind}")
        version = {"version": submitted.version} if with_version else {}
        return {**pending, **version, "status": "pending"}
