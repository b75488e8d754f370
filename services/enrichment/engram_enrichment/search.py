"""Knowledge search: embed the query here, refuse a foreign vector space, floor, join facts."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from engram_embedders import Embedder
from engram_enrichment.adapters.vectors import KnowledgeVectors
from engram_enrichment.knowledge import KnowledgeBase
from engram_vectors.floor import apply_floor, default_floor

log = logging.getLogger(__name__)
SEARCHABLE = ("active", "contested")


class EmbedderMismatch(Exception):
    """The query embedder's fingerprint differs from the collection's."""


@dataclass(frozen=True)
class SearchResult:
    """Facts at or above the floor, the floor used, and how many raw hits it dropped."""

    results: list[dict[str, Any]]
    floor: float
    dropped_below_floor: int


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
        """The raw top-k within the tenant, then the floor; withdrawn or superseded facts skip."""
        mine = self.embedder.provenance.fingerprint
        if await self.vectors.fingerprint() != mine:
            raise EmbedderMismatch("query embedder differs from the collection's embedder")
        embedded = await self.embedder.embed([query])
        hits = await self.vectors.search(tenant_id, embedded.vectors[0], top_k, fingerprint=mine)
        floor = self.floor(min_score)
        floored = apply_floor([(hit, hit.score) for hit in hits], floor)
        entities: dict[str, Any] = {}
        results: list[dict[str, Any]] = []
        for hit, score in floored.kept:
            if hit.payload.get("tenant_id") != tenant_id:
                continue
            entity_id = str(hit.payload.get("entity_id", ""))
            if entity_id not in entities:
                entities[entity_id] = await self.knowledge.load(tenant_id, entity_id)
            entity = entities[entity_id]
            fact = entity.facts.get(str(hit.payload.get("fact_id"))) if entity else None
            if fact is None or fact.status not in SEARCHABLE:
                continue
            results.append(
                {
                    "fact_id": fact.fact_id,
                    "entity_id": entity_id,
                    "attribute": fact.attribute,
                    "value": fact.value,
                    "status": fact.status,
                    "contested": fact.status == "contested",
                    "support": [s.model_dump() for s in fact.support],
                    "score": round(float(score), 6),
                }
            )
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
