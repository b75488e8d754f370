"""Recall: embed the query here, refuse a foreign vector space, search, apply the floor."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from engram_embedders import Embedder
from engram_memory.adapters.vectors import MemoryVectors
from engram_vectors.floor import apply_floor, default_floor

log = logging.getLogger(__name__)

DEFAULT_STATUSES = ("active",)


class EmbedderMismatch(Exception):
    """The query embedder's fingerprint differs from the collection's."""

    def __init__(self, collection: str, query: str) -> None:
        self.collection = collection
        self.query = query
        super().__init__("query embedder differs from the collection's embedder")


@dataclass(frozen=True)
class RecallResult:
    """Hits at or above the floor, the floor used, and how many of the raw top-k it dropped."""

    results: list[dict[str, Any]]
    floor: float
    dropped_below_floor: int


class Recall:
    """Every search names the tenant and the agent; each hit's payload is checked again."""

    def __init__(
        self, embedder: Embedder, vectors: MemoryVectors, *, min_score: float | None = None
    ) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.configured_floor = min_score

    def floor(self, requested: float | None) -> float:
        """The caller's floor, else the configured one, else the embedder model's default."""
        if requested is not None:
            return requested
        if self.configured_floor is not None:
            return self.configured_floor
        return default_floor(self.embedder.provenance.model_id)

    async def recall(
        self,
        tenant_id: str,
        agent_id: str,
        query: str,
        top_k: int,
        *,
        min_score: float | None = None,
        types: list[str] | None = None,
        statuses: list[str] | None = None,
    ) -> RecallResult:
        """The raw top-k within (tenant, agent), then the floor; dropped hits are counted."""
        mine = self.embedder.provenance.fingerprint
        theirs = await self.vectors.fingerprint()
        if mine != theirs:
            raise EmbedderMismatch(theirs, mine)
        wanted = tuple(statuses) if statuses else DEFAULT_STATUSES
        embedded = await self.embedder.embed([query])
        hits = await self.vectors.search(
            tenant_id,
            agent_id,
            embedded.vectors[0],
            top_k,
            statuses=wanted,
            types=types,
            fingerprint=mine,
        )
        floor = self.floor(min_score)
        floored = apply_floor([(hit, hit.score) for hit in hits], floor)
        results = []
        for hit, score in floored.kept:
            found = hit.payload
            mine_only = found.get("tenant_id") == tenant_id and found.get("agent_id") == agent_id
            if not mine_only or found.get("status") not in wanted:
                continue
            results.append(
                {
                    "memory_id": found["memory_id"],
                    "content": found.get("content"),
                    "score": round(float(score), 6),
                    "type": found["type"],
                    "status": found["status"],
                    "provenance": found.get("provenance"),
                    "created_at": found.get("created_at"),
                }
            )
        log.info(
            "recall",
            extra={
                "tenant_id": tenant_id,
                "agent_id": agent_id,
                "raw_hits": len(hits),
                "returned": len(results),
                "dropped_below_floor": floored.dropped,
            },
        )
        return RecallResult(results, floor, floored.dropped)
