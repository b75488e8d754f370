"""Knowledge search: embed the query here, refuse a foreign vector space, floor, join facts."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from engram_embedders import Embedder
from engram_enrichment.adapters.vectors import ARTICLE_SECTION, FACT, KnowledgeVectors
from engram_enrichment.domain.model import Entity, Fact
from engram_enrichment.domain.sections import render_section, text_sha256
from engram_enrichment.knowledge import KnowledgeBase
from engram_vectors.floor import apply_floor, default_floor

log = logging.getLogger(__name__)
SEARCHABLE = ("active", "contested")


class EmbedderMismatch(Exception):
    """The query embedder's fingerprint differs from the collection's."""


@dataclass(frozen=True)
class SearchResult:
    """Facts and sections at or above the floor, the floor used, and how many hits it dropped."""

    results: list[dict[str, Any]]
    floor: float
    dropped_below_floor: int


def _fact(fact: Fact) -> dict[str, Any]:
    return {
        "fact_id": fact.fact_id,
        "attribute": fact.attribute,
        "value": fact.value,
        "status": fact.status,
        "contested": fact.status == "contested",
        "support": [s.model_dump() for s in fact.support],
    }


def fact_result(entity: Entity, fact_id: str) -> dict[str, Any] | None:
    """A live fact as it stands now; withdrawn or superseded facts are not results."""
    fact = entity.facts.get(fact_id)
    if fact is None or fact.status not in SEARCHABLE:
        return None
    return {"kind": FACT, "entity_id": entity.entity_id, **_fact(fact)}


def section_result(entity: Entity, payload: dict[str, Any]) -> dict[str, Any] | None:
    """An active section as rendered now, with the facts it cites and the text its vector is of."""
    section = entity.sections.get(str(payload.get("section_id")))
    if section is None or section.status != "active":
        return None
    facts = [entity.facts[f] for f in section.fact_ids if f in entity.facts]
    live = [f for f in facts if f.status in SEARCHABLE]
    if not live:
        return None
    contested = any(f.status == "contested" for f in live)
    markdown = render_section(entity, section.attribute)
    support = {(s.record_id, s.revision): s.model_dump() for f in live for s in f.support}
    return {
        "kind": ARTICLE_SECTION,
        "section_id": section.section_id,
        "entity_id": entity.entity_id,
        "attribute": section.attribute,
        "status": "contested" if contested else "active",
        "contested": contested,
        "markdown": markdown,
        "text_sha256": text_sha256(markdown),
        "embedded_text_sha256": payload.get("text_sha256"),
        "facts": [_fact(f) for f in facts],
        "support": [support[key] for key in sorted(support)],
    }


class KnowledgeSearch:
    """Hits are re-checked against the entity documents: status and support come from there."""

    def __init__(
        self,
        embedder: Embedder,
        vectors: KnowledgeVectors,
        knowledge: KnowledgeBase,
        *,
        min_score: float | None = None,
    ) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.knowledge = knowledge
        self.configured_floor = min_score

    def floor(self, requested: float | None) -> float:
        """The caller's floor, else the configured one, else the embedder model's default."""
        if requested is not None:
            return requested
        if self.configured_floor is not None:
            return self.configured_floor
        return default_floor(self.embedder.provenance.model_id)

    async def search(
        self, tenant_id: str, query: str, top_k: int, *, min_score: float | None = None
    ) -> SearchResult:
        """The raw top-k within the tenant, then the floor; what is no longer live is skipped."""
        mine = self.embedder.provenance.fingerprint
        if await self.vectors.fingerprint() != mine:
            raise EmbedderMismatch("query embedder differs from the collection's embedder")
        embedded = await self.embedder.embed([query])
        hits = await self.vectors.search(tenant_id, embedded.vectors[0], top_k, fingerprint=mine)
        floor = self.floor(min_score)
        floored = apply_floor([(hit, hit.score) for hit in hits], floor)
        entities: dict[str, Entity | None] = {}
        results: list[dict[str, Any]] = []
        for hit, score in floored.kept:
            if hit.payload.get("tenant_id") != tenant_id:
                continue
            entity_id = str(hit.payload.get("entity_id", ""))
            if entity_id not in entities:
                entities[entity_id] = await self.knowledge.load(tenant_id, entity_id)
            entity = entities[entity_id]
            if entity is None:
                continue
            if hit.payload.get("kind") == ARTICLE_SECTION:
                found = section_result(entity, hit.payload)
            else:
                found = fact_result(entity, str(hit.payload.get("fact_id")))
            if found is not None:
                provenance = hit.payload.get("provenance")
                results.append({**found, "provenance": provenance, "score": round(float(score), 6)})
        log.info(
            "knowledge search",
            extra={
                "tenant_id": tenant_id,
                "raw_hits": len(hits),
                "returned": len(results),
                "dropped_below_floor": floored.dropped,
            },
        )
        return SearchResult(results, floor, floored.dropped)
