"""Enrichment's internal knowledge API, called by the gateway with the caller's tenant."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field, model_validator

from engram_enrichment.api.dependencies import Deps
from engram_enrichment.api.views import entity_view
from engram_enrichment.domain.contradictions import ResolutionRefused
from engram_enrichment.domain.relations import MAX_DEPTH, MAX_PATH_DEPTH, Direction
from engram_enrichment.domain.timeline import in_time, known_then
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.relations import BadCursor, NoSuchEntity, RelationGraph, When
from engram_enrichment.service.resolution import KeptChanging, NoSuchContradiction
from engram_events.ids import Scalar
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1/knowledge", tags=["internal"])
EntityFilter = Annotated[str | None, Query(min_length=1, max_length=256)]
"""An entity id (e.g. `supplier:s-101`) that narrows a listing to that entity."""
ContradictionId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^ctr_[0-9a-f]+$")]
_REFUSALS = {"not-found": 404, "already-resolved": 409, "not-a-claim": 422}


class ResolveBody(BaseModel):
    """Keep one claim, by its fact id or by its value."""

    model_config = ConfigDict(extra="forbid")

    keep: str | None = Field(default=None, min_length=1, max_length=512)
    value: Scalar = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ResolveBody:
        if (self.keep is None) == ("value" not in self.model_fields_set):
            raise ValueError("give exactly one of keep (a fact id) or value")
        return self


@router.get("/entities")
async def list_entities(
    deps: Deps,
    tenant_id: TenantDep,
    entity_type: Annotated[str | None, Query(alias="type", max_length=100)] = None,
    after: Annotated[str | None, Query(max_length=256)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """The tenant's entities (summaries), optionally of one type, paged by entity id."""
    rows = await deps.knowledge.store.list_entities(tenant_id, entity_type, after, limit)
    return {"entities": rows, "next_after": rows[-1]["entity_id"] if len(rows) == limit else None}


def moment(name: str, value: str | None) -> datetime | None:
    """An ISO date (midnight UTC) or date-time (naive means UTC); else a 422 naming `name`."""
    if value is None:
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), datetime.min.time(), tzinfo=UTC)
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise Problem(422, "validation-error", f"{name} must be an ISO date or date-time") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


Moment = Annotated[str | None, Query(min_length=1, max_length=64)]
"""`valid_at` (what was true then) or `as_of` (what Engram knew then)."""


def _graph(deps: Deps) -> RelationGraph:
    """The relation reader, or 503 where the service runs without one."""
    if deps.graph is None:
        raise Problem(503, "service-unavailable", "relations are not kept here")
    return deps.graph


@router.get("/entities/{entity_id:path}/relations")
async def entity_relations(
    entity_id: str,
    deps: Deps,
    tenant_id: TenantDep,
    direction: Direction = "both",
    predicate: Annotated[str | None, Query(min_length=1, max_length=100)] = None,
    depth: Annotated[int, Query(ge=1, le=MAX_DEPTH)] = 1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(min_length=1, max_length=2000)] = None,
    valid_at: Moment = None,
    as_of: Moment = None,
) -> dict[str, Any]:
    """The entity's relations up to `depth` hops, nearest first, each with its far end's
    `resolved` flag; paged by an opaque cursor; `valid_at`/`as_of` read them in time."""
    when = When(moment("valid_at", valid_at), moment("as_of", as_of))
    try:
        return await _graph(deps).relations(
            tenant_id,
            entity_id,
            direction=direction,
            predicate=predicate,
            depth=depth,
            limit=limit,
            cursor=cursor,
            when=when,
        )
    except NoSuchEntity:
        raise Problem(404, detail="no such entity") from None
    except BadCursor:
        raise Problem(
            422, "validation-error", "cursor is not one this listing handed out"
        ) from None


class PathBody(BaseModel):
    """Two entities and how many hops a path between them may take."""

    model_config = ConfigDict(extra="forbid")

    start: str = Field(alias="from", min_length=1, max_length=256)
    goal: str = Field(alias="to", min_length=1, max_length=256)
    max_depth: int = Field(default=3, ge=1, le=MAX_PATH_DEPTH)
    limit: int = Field(default=10, ge=1, le=100)


@router.post("/paths")
async def find_paths(body: PathBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """The shortest paths between two entities over relations walked either way."""
    try:
        return await _graph(deps).paths(
            tenant_id, body.start, body.goal, body.max_depth, body.limit
        )
    except NoSuchEntity as exc:
        raise Problem(404, detail=f"no such entity: {exc}") from None


@router.get("/entities/{entity_id:path}")
async def get_entity(
    entity_id: str,
    deps: Deps,
    tenant_id: TenantDep,
    include_withdrawn: bool = False,
    valid_at: Moment = None,
    as_of: Moment = None,
) -> dict[str, Any]:
    """One entity's article, facts with status and support, and its contradictions; with
    `valid_at` the values true then, with `as_of` what Engram knew then."""
    when, known = moment("valid_at", valid_at), moment("as_of", as_of)
    entity = await deps.knowledge.load(tenant_id, entity_id)
    if entity is None or (known is not None and not known_then(entity, known)):
        raise Problem(404, detail="no such entity")
    return entity_view(in_time(entity, deps.schema, when, known), include_withdrawn)


@router.get("/contradictions")
async def list_contradictions(
    deps: Deps,
    tenant_id: TenantDep,
    status: Literal["open", "resolved"] | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    entity_id: EntityFilter = None,
) -> dict[str, Any]:
    """The tenant's contradictions (of one entity, when named) with both claims and support."""
    rows = await deps.knowledge.store.list_contradictions(tenant_id, status, limit, entity_id)
    return {"contradictions": rows}


@router.get("/contradictions/{contradiction_id}")
async def get_contradiction(
    contradiction_id: ContradictionId, deps: Deps, tenant_id: TenantDep
) -> dict[str, Any]:
    """One contradiction, from the entity that owns it."""
    return await _current(deps.knowledge, tenant_id, contradiction_id)


async def _current(kb: KnowledgeBase, tenant_id: str, contradiction_id: str) -> dict[str, Any]:
    """The contradiction as its entity holds it now."""
    index = await kb.store.contradiction(tenant_id, contradiction_id)
    entity = await kb.load(tenant_id, index["entity_id"]) if index else None
    if entity is None or contradiction_id not in entity.contradictions:
        raise Problem(404, detail="no such contradiction")
    item = entity.contradictions[contradiction_id]
    return {
        **item.model_dump(mode="json", exclude={"last_cause", "opened_by", "resolved_by"}),
        "entity_id": entity.entity_id,
    }


@router.post("/contradictions/{contradiction_id}/resolve")
async def resolve_contradiction(
    contradiction_id: ContradictionId, body: ResolveBody, deps: Deps, tenant_id: TenantDep
) -> dict[str, Any]:
    """Keep one claim, supersede the others, regenerate the article; announce once written."""
    try:
        entity = await deps.resolutions.resolve(tenant_id, contradiction_id, body.keep, body.value)
    except NoSuchContradiction:
        raise Problem(404, detail="no such contradiction") from None
    except ResolutionRefused as exc:
        raise Problem(_REFUSALS[exc.kind], exc.kind, str(exc)) from None
    except KeptChanging:
        raise Problem(409, "concurrent-update", "the entity kept changing; retry") from None
    return {
        "contradiction": await _current(deps.knowledge, tenant_id, contradiction_id),
        "entity": entity_view(entity),
    }
