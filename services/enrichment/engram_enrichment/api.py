"""Enrichment's internal HTTP API, called by the gateway with the caller's tenant."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator

from engram_enrichment.announce import announcements
from engram_enrichment.domain.contradictions import (
    ResolutionRefused,
    claim_for_value,
    resolve,
)
from engram_enrichment.domain.ids import value_sha256
from engram_enrichment.domain.model import Entity, Fact
from engram_enrichment.knowledge import KnowledgeBase
from engram_enrichment.ports import ConcurrentUpdate
from engram_enrichment.search import EmbedderMismatch, LexicalOff
from engram_events.ids import Scalar
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem
from engram_vectors.ranking import Mode

router = APIRouter(prefix="/internal/v1/knowledge", tags=["internal"])
EntityFilter = Annotated[str | None, Query(min_length=1, max_length=256)]
"""An entity id (e.g. `supplier:s-101`) that narrows a listing to that entity."""
ContradictionId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^ctr_[0-9a-f]+$")]
RESOLVE_ATTEMPTS = 3
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


def _knowledge(request: Request) -> KnowledgeBase:
    kb: KnowledgeBase = request.app.state.knowledge
    return kb


def fact_view(fact: Fact) -> dict[str, Any]:
    """A fact as callers see it: contested ones always carry their flag."""
    return {
        "fact_id": fact.fact_id,
        "attribute": fact.attribute,
        "value": fact.value,
        "status": fact.status,
        "contested": fact.status == "contested",
        "contradiction_id": fact.contradiction_id,
        "superseded_by": fact.superseded_by,
        "support": [s.model_dump() for s in fact.support],
        "valid_from": fact.valid_from,
        "valid_to": fact.valid_to,
        "first_seen": fact.first_seen,
        "last_seen": fact.last_seen,
    }


def entity_view(entity: Entity, include_withdrawn: bool = False) -> dict[str, Any]:
    """The article with the facts it was rendered from."""
    facts = sorted(entity.facts.values(), key=lambda f: (f.attribute, f.fact_id))
    shown = [f for f in facts if include_withdrawn or f.status != "withdrawn"]
    return {
        "entity_id": entity.entity_id,
        "entity_type": entity.entity_type,
        "version": entity.version,
        "article": entity.article,
        "facts": [fact_view(f) for f in shown],
        "withdrawn_count": sum(1 for f in facts if f.status == "withdrawn"),
        "contradictions": [
            {"contradiction_id": c.contradiction_id, "attribute": c.attribute, "status": c.status}
            for c in sorted(entity.contradictions.values(), key=lambda c: c.contradiction_id)
        ],
        "sections": [
            s.model_dump(
                include={"section_id", "attribute", "text_sha256", "fact_ids", "record_ids"}
            )
            for _, s in sorted(entity.sections.items())
            if s.status == "active"
        ],
        "summary": entity.summary.model_dump(mode="json") if entity.summary else None,
    }


@router.get("/entities")
async def list_entities(
    request: Request,
    tenant_id: TenantDep,
    entity_type: Annotated[str | None, Query(alias="type", max_length=100)] = None,
    after: Annotated[str | None, Query(max_length=256)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """The tenant's entities (summaries), optionally of one type, paged by entity id."""
    rows = await _knowledge(request).store.list_entities(tenant_id, entity_type, after, limit)
    return {"entities": rows, "next_after": rows[-1]["entity_id"] if len(rows) == limit else None}


@router.get("/entities/{entity_id:path}")
async def get_entity(
    entity_id: str, request: Request, tenant_id: TenantDep, include_withdrawn: bool = False
) -> dict[str, Any]:
    """One entity's article, facts with status and support, and its contradictions."""
    entity = await _knowledge(request).load(tenant_id, entity_id)
    if entity is None:
        raise Problem(404, detail="no such entity")
    return entity_view(entity, include_withdrawn)


@router.get("/contradictions")
async def list_contradictions(
    request: Request,
    tenant_id: TenantDep,
    status: Literal["open", "resolved"] | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    entity_id: EntityFilter = None,
) -> dict[str, Any]:
    """The tenant's contradictions (of one entity, when named) with both claims and support."""
    rows = await _knowledge(request).store.list_contradictions(tenant_id, status, limit, entity_id)
    return {"contradictions": rows}


@router.get("/contradictions/{contradiction_id}")
async def get_contradiction(
    contradiction_id: ContradictionId, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """One contradiction, from the entity that owns it."""
    return await _current(_knowledge(request), tenant_id, contradiction_id)


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
    contradiction_id: ContradictionId, body: ResolveBody, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """Keep one claim, supersede the others, regenerate the article; announce once written."""
    kb = _knowledge(request)
    index = await kb.store.contradiction(tenant_id, contradiction_id)
    if index is None:
        raise Problem(404, detail="no such contradiction")
    entity_id = str(index["entity_id"])
    cause = f"resolve:{tenant_id}:{contradiction_id}"
    now = datetime.now(UTC)
    for attempt in range(1, RESOLVE_ATTEMPTS + 1):
        try:
            current = await kb.load(tenant_id, entity_id)
            if current is None:
                raise Problem(404, detail="no such contradiction")
            keep = body.keep or claim_for_value(current, contradiction_id, value_sha256(body.value))

            def mutate(entity: Entity, keep: str = keep) -> None:
                resolve(entity, contradiction_id, keep, cause=cause, at=now)

            outcome = await kb.change(tenant_id, entity_id, "unknown", mutate, cause=cause, at=now)
            break
        except ResolutionRefused as exc:
            raise Problem(_REFUSALS[exc.kind], exc.kind, str(exc)) from None
        except ConcurrentUpdate:
            if attempt == RESOLVE_ATTEMPTS:
                raise Problem(409, "concurrent-update", "the entity kept changing; retry") from None
    staged = announcements(outcome.entity, cause=cause)
    sections = getattr(request.app.state, "section_vectors", None)
    if sections is not None:
        staged += await sections.follow_up(outcome.entity, cause)
    await request.app.state.outbox.stage(staged)
    return {
        "contradiction": await _current(kb, tenant_id, contradiction_id),
        "entity": entity_view(outcome.entity),
    }


class SearchBody(BaseModel):
    """A literal query over the tenant's facts and sections, with an optional floor; `mode`
    picks the retrieval (dense and lexical fused, or either alone)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000)
    top_k: int = Field(default=5, ge=1, le=1000)
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    mode: Mode = "hybrid"


@router.post("/search")
async def search_knowledge(
    body: SearchBody, request: Request, tenant_id: TenantDep
) -> dict[str, Any]:
    """Facts and sections ranked by the mode and floored; each result carries its status, flag,
    support and every score; 409 when the embedder differs or lexical search is off."""
    search = getattr(request.app.state, "search", None)
    if search is None:
        raise Problem(503, "recall-disabled", "knowledge search is not enabled on this service")
    if not body.query.strip():
        raise Problem(422, "validation-error", "the query is blank")
    top_k = min(body.top_k, request.app.state.max_top_k)
    try:
        found = await search.search(
            tenant_id, body.query, top_k, min_score=body.min_score, mode=body.mode
        )
    except EmbedderMismatch:
        raise Problem(
            409,
            "embedder-mismatch",
            "the query embedder differs from the embedder of the stored vectors",
        ) from None
    except LexicalOff as off:
        raise Problem(409, "lexical-disabled", str(off)) from None
    return {
        "results": found.results,
        "mode": found.mode,
        "floor": found.floor,
        "dropped_below_floor": found.dropped_below_floor,
    }
