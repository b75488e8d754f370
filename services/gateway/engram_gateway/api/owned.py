"""Reads answered by the owning service, or `pending` while only the gateway knows the write."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from engram_gateway.api.dependencies import GatewayDeps
from engram_platform.problems import Problem


async def owner_view_or_pending(
    deps: GatewayDeps,
    tenant_id: str,
    *,
    service: str,
    path: str,
    kind: str,
    item_id: str,
    pending: dict[str, Any],
    copied: tuple[str, ...] = (),
) -> JSONResponse:
    """The owner's view; else `pending` (plus fields from the submission) if it was accepted."""
    response = await deps.owners.request(service, "GET", path, tenant_id=tenant_id)
    if response.status_code == 200:
        return JSONResponse(response.json())
    if response.status_code != 404:
        raise Problem(503, "service-unavailable", f"the {service} service could not answer")
    submitted = await deps.submissions.get(tenant_id, kind, item_id)
    if submitted is None:
        raise Problem(404, detail=f"no such {kind}")
    fields = {name: submitted.get(name) for name in copied}
    return JSONResponse({**pending, **fields, "status": "pending"})
