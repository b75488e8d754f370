"""Knowledge search over the tenant's facts and sections, for the gateway."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from engram_enrichment.api.dependencies import Deps
from engram_enrichment.api.knowledge import moment
from engram_enrichment.domain.model import Entity
from engram_enrichment.domain.timeline import in_time
from engram_enrichment.service.expansion import expand
from engram_enrichment.service.search import EmbedderMismatch, LexicalOff
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem
from engram_vectors.ranking import Mode

router = APIRouter(prefix="/internal/v1/knowledge", tags=["internal"])


class SearchBody(BaseModel):
    """A literal query over the tenant's facts, sections and passages (or the `kinds` named),
    with an optional floor; `mode` picks the retrieval (dense and lexical fused, or either
    alone)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000)
    top_k: int = Field(default=5, ge=1, le=1000)
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    mode: Mode = "hybrid"
    kinds: list[Literal["fact", "article_section", "passage"]] | None = Field(
        default=None, min_length=1, max_length=3
    )
    expand: int | None = Field(default=None, ge=1, le=2)
    valid_at: str | None = Field(default=None, min_length=1, max_length=64)
    """Facts and sections as true then (an ISO date or date-time)."""
    as_of: str | None = Field(default=None, min_length=1, max_length=64)
    """Facts and sections as Engram knew them then."""


@router.post("/search")
async def search_knowledge(body: SearchBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Facts and sections ranked by the mode and floored; each result carries its status, flag,
    support and every score; with `expand`, each hit on an entity is followed by its related
    entities' facts, nearest first; 409 when the embedder differs or lexical search is off."""
    if deps.search is None:
        raise Problem(503, "recall-disabled", "knowledge search is not enabled on this service")
    if not body.query.strip():
        raise Problem(422, "validation-error", "the query is blank")
    top_k = min(body.top_k, deps.max_top_k)
    when, known = moment("valid_at", body.valid_at), moment("as_of", body.as_of)
    schema = deps.schema

    def seen(entity: Entity) -> Entity:
        return in_time(entity, schema, when, known)

    try:
        found = await deps.search.search(
            tenant_id,
            body.query,
            top_k,
            min_score=body.min_score,
            mode=body.mode,
            kinds=sorted(set(body.kinds)) if body.kinds else None,
            view=seen if when or known else None,
        )
    except EmbedderMismatch:
        raise Problem(
            409,
            "embedder-mismatch",
            "the query embedder differs from the embedder of the stored vectors",
        ) from None
    except LexicalOff as off:
        raise Problem(409, "lexical-disabled", str(off)) from None
    results = found.results
    if body.expand and deps.graph is not None:
        results = await expand(deps.graph, deps.knowledge, tenant_id, results, body.expand)
    return {
        "results": results,
        "mode": found.mode,
        "floor": found.floor,
        "dropped_below_floor": found.dropped_below_floor,
    }
