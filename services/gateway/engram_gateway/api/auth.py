"""Bearer-key authentication: every /v1 route depends on `caller`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from engram_gateway.api.dependencies import Deps
from engram_gateway.domain.model import Caller
from engram_gateway.ports import AgentRegistry
from engram_platform.problems import Problem


async def registry(deps: Deps) -> AgentRegistry:
    """The registry built in the lifespan (async: a plain function would run in a thread)."""
    return deps.registry


async def caller(request: Request, deps: Deps) -> Caller:
    """The authenticated caller, or 401 with a problem document saying what to send."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem(401, detail="send 'Authorization: Bearer <api key>'")
    found = await deps.registry.authenticate(token)
    if found is None:
        raise Problem(401, detail="the API key is not valid")
    request.state.tenant_id = found.tenant_id
    await deps.keys.note_use(found)
    return found


CallerDep = Annotated[Caller, Depends(caller)]
RegistryDep = Annotated[AgentRegistry, Depends(registry)]
