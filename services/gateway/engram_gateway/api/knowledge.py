"""`/v1/knowledge`: entities with their articles, and contradictions, proxied to enrichment."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps, GatewayDeps
from engram_gateway.domain.model import Caller
from engram_gateway.domain.text import QueryText
from engram_platform.problems import Problem

router = APIRouter(prefix="/v1/knowledge", tags=["knowledge"])
ContradictionId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^ctr_[0-9a-f]+$")]
_PASSED_THROUGH = {200, 400, 404, 409, 422, 503}
Moment = Annotated[str | None, Query(min_length=1, max_length=64)]
"""`valid_at` (what was true then) or `as_of` (what Engram knew then): an ISO date or date-time,
checked by enrichment (a 422 names the parameter)."""


def in_time(valid_at: str | None, as_of: str | None) -> dict[str, str]:
    """The read-in-time parameters given, to pass on."""
    return {k: v for k, v in (("valid_at", valid_at), ("as_of", as_of)) if v is not None}


async def _proxy(deps: GatewayDeps, caller: Caller, method: str, path: str, **kwargs: Any) -> Any:
    """Enrichment's 200 answer, parsed; its own errors pass through, outages are 503."""
    return await deps.answers.json(
        "enrichment",
        method,
        f"/internal/v1/knowledge{path}",
        tenant_id=caller.tenant_id,
        passed=_PASSED_THROUGH,
        **kwargs,
    )


async def _passed_on(
    deps: GatewayDeps, caller: Caller, method: str, path: str, **kwargs: Any
) -> Response:
    """Enrichment's 200 answer as its bytes, not parsed and encoded again: a page of relations
    is ~65 kB, which cost the gateway ~1.8 ms of CPU to decode and encode."""
    raw = await deps.answers.raw(
        "enrichment",
        method,
        f"/internal/v1/knowledge{path}",
        tenant_id=caller.tenant_id,
        passed=_PASSED_THROUGH,
        **kwargs,
    )
    return Response(raw, media_type="application/json")


@router.get("/entities")
async def list_entities(
    deps: Deps,
    caller: CallerDep,
    entity_type: Annotated[str | None, Query(alias="type", max_length=100)] = None,
    after: Annotated[str | None, Query(max_length=256)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> JSONResponse:
    """The caller's entities, optionally of one type, paged by entity id."""
    params: dict[str, Any] = {"limit": limit}
    if entity_type:
        params["type"] = entity_type
    if after:
        params["after"] = after
    return JSONResponse(await _proxy(deps, caller, "GET", "/entities", params=params))


@router.get("/entities/{entity_id:path}/relations")
async def entity_relations(
    entity_id: Annotated[str, Path(min_length=1, max_length=256)],
    deps: Deps,
    caller: CallerDep,
    direction: Literal["out", "in", "both"] = "both",
    predicate: Annotated[str | None, Query(min_length=1, max_length=100)] = None,
    depth: Annotated[int, Query(ge=1, le=3)] = 1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(min_length=1, max_length=2000)] = None,
    valid_at: Moment = None,
    as_of: Moment = None,
) -> Response:
    """The entity's relations up to `depth` hops (1-3) out, in or both ways, nearest first:
    each with its ends, predicate, direction, depth, status, support and whether its far end
    exists yet (`resolved`); `next_cursor` pages on; `valid_at` gives the relations true then,
    `as_of` those Engram knew then."""
    params: dict[str, Any] = {"direction": direction, "depth": depth, "limit": limit}
    if predicate:
        params["predicate"] = predicate
    if cursor:
        params["cursor"] = cursor
    params |= in_time(valid_at, as_of)
    path = f"/entities/{quote(entity_id, safe='')}/relations"
    return await _passed_on(deps, caller, "GET", path, params=params)


class FindPaths(BaseModel):
    """Two entity ids and the most hops a path between them may take."""

    model_config = ConfigDict(extra="forbid")

    start: str = Field(alias="from", min_length=1, max_length=256)
    goal: str = Field(alias="to", min_length=1, max_length=256)
    max_depth: int = Field(default=3, ge=1, le=4)
    limit: int = Field(default=10, ge=1, le=100)


@router.post("/paths")
async def find_paths(body: FindPaths, deps: Deps, caller: CallerDep) -> Response:
    """The shortest paths between two entities over relations walked either way (bounded by
    `max_depth` and a cap on entities visited), each edge with its direction."""
    return await _passed_on(deps, caller, "POST", "/paths", json=body.model_dump(by_alias=True))


@router.get("/entities/{entity_id:path}")
async def get_entity(
    entity_id: Annotated[str, Path(min_length=1, max_length=256)],
    deps: Deps,
    caller: CallerDep,
    include_withdrawn: bool = False,
    valid_at: Moment = None,
    as_of: Moment = None,
) -> JSONResponse:
    """The entity's Markdown article and its facts with status, support and contested flag;
    `valid_at` (an ISO date or date-time) gives the values true then, `as_of` what Engram
    knew then."""
    params = {"include_withdrawn": "true"} if include_withdrawn else {}
    params |= in_time(valid_at, as_of)
    return JSONResponse(
        await _proxy(deps, caller, "GET", f"/entities/{quote(entity_id, safe='')}", params=params)
    )


@router.get("/contradictions")
async def list_contradictions(
    deps: Deps,
    caller: CallerDep,
    status: Literal["open", "resolved"] | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    entity_id: Annotated[str | None, Query(min_length=1, max_length=256)] = None,
) -> JSONResponse:
    """The caller's contradictions (of one entity, when named), each with both claims and their
    support."""
    params: dict[str, Any] = {"limit": limit}
    if status:
        params["status"] = status
    if entity_id:
        params["entity_id"] = entity_id
    return JSONResponse(await _proxy(deps, caller, "GET", "/contradictions", params=params))


@router.get("/contradictions/{contradiction_id}")
async def get_contradiction(
    contradiction_id: ContradictionId, deps: Deps, caller: CallerDep
) -> JSONResponse:
    """One contradiction as its entity holds it now."""
    return JSONResponse(await _proxy(deps, caller, "GET", f"/contradictions/{contradiction_id}"))


@router.post("/contradictions/{contradiction_id}/resolve")
async def resolve_contradiction(
    contradiction_id: ContradictionId, request: Request, deps: Deps, caller: CallerDep
) -> JSONResponse:
    """Body `{keep: fact_id}` or `{value}`: the loser is superseded and the article regenerated."""
    try:
        body = await request.json()
    except ValueError:
        raise Problem(422, "validation-error", "send {keep: fact_id} or {value}") from None
    if not isinstance(body, dict):
        raise Problem(422, "validation-error", "send {keep: fact_id} or {value}")
    return JSONResponse(
        await _proxy(deps, caller, "POST", f"/contradictions/{contradiction_id}/resolve", json=body)
    )


class SearchKnowledge(BaseModel):
    """A literal query over the caller's facts, article sections and document passages (or the
    `kinds` named), with an optional floor; `mode` picks the retrieval: dense and lexical fused
    (`hybrid`), or either alone."""

    model_config = ConfigDict(extra="forbid")

    query: QueryText = Field(min_length=1, max_length=2000)
    top_k: int = Field(default=5, ge=1, le=1000)
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    mode: Literal["hybrid", "dense", "lexical"] = "hybrid"
    kinds: list[Literal["fact", "article_section", "passage"]] | None = Field(
        default=None, min_length=1, max_length=3
    )
    expand: int | None = Field(default=None, ge=1, le=2)
    """Follow each hit on an entity with the live facts of entities up to this many relations
    away (1 or 2), nearest first."""
    valid_at: str | None = Field(default=None, min_length=1, max_length=64)
    """Facts and sections as true then: an ISO date or date-time (checked by enrichment)."""
    as_of: str | None = Field(default=None, min_length=1, max_length=64)
    """Facts and sections as Engram knew them then."""


@router.post("/search")
async def search_knowledge(body: SearchKnowledge, deps: Deps, caller: CallerDep) -> JSONResponse:
    """Facts, sections and passages ranked by the mode above the floor (an exact identifier
    match is kept): facts and sections with status, contested flag and support, passages with
    their citation (document, version, name, heading path, page, span, text), each with
    `scores`; with `expand` (1 or 2), each hit on an entity is followed by the facts of its
    related entities, nearest first, each marked `expanded` (from, distance, relation);
    `valid_at`/`as_of` judge facts and sections as true or as known then (passages are not
    read in time); 409 `lexical-disabled` for `lexical` where enrichment keeps no lexical vectors."""
    return JSONResponse(
        await _proxy(deps, caller, "POST", "/search", json=body.model_dump(exclude_none=True))
    )
