"""`/v1/ops/reindex`: move the memory and knowledge stores to another embedder, and watch the
moves. The stores serve every tenant, so only a key with the operator's `ops` role may start or
read them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.domain.access import OPS
from engram_gateway.domain.model import Caller
from engram_gateway.domain.reindex import STORES
from engram_platform.problems import Problem

router = APIRouter(prefix="/v1/ops", tags=["ops"])


async def operator(caller: CallerDep) -> Caller:
    """The caller, when its key has the `ops` role; 403 otherwise."""
    if OPS not in caller.roles:
        raise Problem(403, detail="a reindex needs a key with the 'ops' role")
    return caller


OperatorDep = Annotated[Caller, Depends(operator)]


Store = Literal["memory", "knowledge"]


class StartReindex(BaseModel):
    """The embedder to move to (`hashing_dimension`: the hashing embedder's size) and the
    stores to move (both by default)."""

    model_config = ConfigDict(extra="forbid")

    embedder: Literal["minilm", "bge-small", "hashing", "openai"]
    hashing_dimension: int | None = Field(default=None, ge=2, le=4096)
    stores: list[Store] = Field(default=["memory", "knowledge"], min_length=1, max_length=2)


@router.post("/reindex", status_code=202)
async def start_reindex(body: StartReindex, deps: Deps, caller: OperatorDep) -> Any:
    """Start re-embedding every memory and every knowledge item into new collections; each store
    serves from its old one until its new one is complete and verified. 409 while one runs."""
    target = body.model_dump(exclude_none=True, exclude={"stores"})
    stores = list(dict.fromkeys(body.stores))
    return await deps.reindexes.start(caller.tenant_id, target, stores)


@router.get("/reindex")
async def reindex_progress(deps: Deps, caller: OperatorDep) -> Any:
    """The latest reindex of each store (`stores`), and over them: state, done/total, seconds,
    rate (items/s) and eta."""
    return await deps.reindexes.progress(caller.tenant_id, STORES)
