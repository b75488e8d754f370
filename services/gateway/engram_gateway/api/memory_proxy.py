"""What every memory route shares: the owned-agent check and the call to the memory service."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import Path
from fastapi.responses import Response

from engram_gateway.api.dependencies import GatewayDeps
from engram_gateway.domain.model import Caller
from engram_gateway.ports import AgentRegistry
from engram_platform.problems import Problem

AgentId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
MemoryId = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]
PASSED_THROUGH = (200, 404, 409, 422)


async def owned_agent(registry: AgentRegistry, caller: Caller, agent_id: str) -> None:
    """404 unless the caller's tenant owns the agent; nothing else runs before this."""
    if await registry.get_agent(caller.tenant_id, agent_id) is None:
        raise Problem(404, detail="no such agent")


async def proxy(deps: GatewayDeps, caller: Caller, method: str, path: str, **kw: Any) -> Any:
    """Call the memory service for the caller's tenant; its errors pass through as problems."""
    response = await deps.owners.request("memory", method, path, tenant_id=caller.tenant_id, **kw)
    if response.status_code not in PASSED_THROUGH:
        raise Problem(503, "service-unavailable", "the memory service could not answer")
    if response.status_code != 200:
        _raise_problem(response.status_code, response.json())
    return response.json()


async def proxy_read(
    deps: GatewayDeps, caller: Caller, path: str, body: dict[str, Any]
) -> Response:
    """A read-only POST to the memory service whose 200 answer is passed on as its bytes (never
    decoded and encoded again); its errors pass through as problems, as `proxy`."""
    status, raw = await deps.owners.read_post(
        "memory", path, json.dumps(body).encode(), tenant_id=caller.tenant_id
    )
    if status not in PASSED_THROUGH:
        raise Problem(503, "service-unavailable", "the memory service could not answer")
    if status != 200:
        _raise_problem(status, json.loads(raw))
    return Response(raw, media_type="application/json")


def _raise_problem(status: int, body: dict[str, Any]) -> None:
    """The owner's problem document as the gateway's own, keeping its extra members."""
    extra = {k: v for k, v in body.items() if k not in {"type", "title", "status", "detail"}}
    extra.pop("instance", None)
    kind = str(body.get("type", "")).rsplit("/", 1)[-1] or None
    raise Problem(status, kind, str(body.get("detail", "")), **extra)
