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


async def owned_agent(registry: AgentRegistry, caller: Caller, agent_id: str) -> None:
    """404 unless the caller's tenant owns the agent; nothing else runs before this."""
    if await registry.get_agent(caller.tenant_id, agent_id) is None:
        raise Problem(404, detail="no such agent")


async def proxy(deps: GatewayDeps, caller: Caller, method: str, path: str, **kw: Any) -> Any:
    """Call the memory service for the caller's tenant; its errors pass through as problems."""
    return await deps.answers.json("memory", method, path, tenant_id=caller.tenant_id, **kw)


async def proxy_read(
    deps: GatewayDeps, caller: Caller, path: str, body: dict[str, Any]
) -> Response:
    """A read-only POST to the memory service whose 200 answer is passed on as its bytes (never
    decoded and encoded again); its errors pass through as problems, as `proxy`."""
    raw = await deps.answers.read_post(
        "memory", path, json.dumps(body).encode(), tenant_id=caller.tenant_id
    )
    return Response(raw, media_type="application/json")
