"""`/v1/ops/reindex`: move the memory store to another embedder, and watch the move. The store
serves every tenant, so only a key with the operator's `ops` role may start or read it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.api.memory_proxy import proxy
from engram_gateway.domain.access import OPS
from engram_gateway.domain.model import Caller
from engram_platform.problems import Problem

router = APIRouter(prefix="/v1/ops", tags=["ops"])


async def operator(caller: CallerDep) -> Caller:
    """The caller, when its key has the `ops` role; 403 otherwise."""
    if OPS not in caller.roles:
        raise Problem(403, detail="a reindex needs a key with the 'ops' role")
    return caller


OperatorDep = Annotated[Caller, Depends(operator)]


class StartReindex(BaseModel):
    """The embedder to move to (`hashing_dimension`: the hashing embedder's size)."""

    model_config = ConfigDict(extra="forbid")

    embedder: Literal["minilm", "bge-small", "hashing", "openai"]
    hashing_dimension: int | None = Field(default=None, ge=2, le=4096)


@router.post("/reindex", status_code=202)
async def start_reindex(body: StartReindex, deps: Deps, caller: OperatorDep) -> Any:
    """Start re-embedding every memory into a new collection; recall reads the old one until
    the new one is complete and verified. 409 while one runs."""
    return await proxy(
        deps, caller, "POST", "/internal/v1/reindex", json=body.model_dump(exclude_none=True)
    )


@router.get("/reindex")
async def reindex_progress(deps: Deps, caller: OperatorDep) -> Any:
    """The latest reindex: state, done/total, started_at, seconds and rate (memories/s)."""
    return await proxy(deps, caller, "GET", "/internal/v1/reindex")
