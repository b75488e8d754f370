"""Recall: embed the query here, refuse a foreign vector space, retrieve dense and lexical
candidates inside the vector store, rank them by the mode, apply the floor."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engram_embedders import Embedder
from engram_events.memory_filter import MemoryFilter
from engram_memory.domain.expiry import lapsed
from engram_memory.domain.selection import Selection
from engram_memory.ports import MemoryPoints
from engram_vectors import HybridHit, SparseVector
from engram_vectors.floor import chosen_floor
from engram_vectors.fusion import best_lexical
from engram_vectors.lexical import LEXICAL_ENCODER, query_vector
from engram_vectors.ranking import (
    FusionSettings,
    Mode,
    Ranked,
    floor_ranked,
    matches,
    needing_content,
    payload_content,
    rank,
    whole_identifiers,
)

log = logging.getLogger(__name__)

DEFAULT_STATUSES = ("active",)
MIN_CANDIDATES = 50
"""Each retrieval's candidate list is at least this long (4x top_k beyond that), so fusion and
recency decay have more than the final top-k to choose from."""
MAX_CANDIDATES = 400


class EmbedderMismatch(Exception):
    """The query embedder's fingerprint differs from the collection's."""

    def __init__(self, collection: str, query: str) -> None:
        self.collection = collection
        self.query = query
        super().__init__("query embedder differs from the collection's embedder")


class LexicalOff(Exception):
    """Lexical recall was asked for where the service keeps no lexical vectors."""


@dataclass(frozen=True)
class RecallResult:
    """Hits at or above the floor, the floor used, and how many of the raw top-k it dropped."""

    results: list[dict[str, Any]]
    floor: float
    dropped_below_floor: int
    mode: Mode = "hybrid"


def _result(item: Ranked) -> dict[str, Any]:
    """What a hit shows: the memory as its point holds it, and every score that placed it."""
    found = item.hit.payload
    return {
        "memory_id": found["memory_id"],
        "content": found.get("content"),
        "score": round(float(item.hit.dense), 6),
        "scores": {
            "dense": round(float(item.hit.dense), 6),
            "lexical": None if item.hit.lexical is None else round(float(item.hit.lexical), 6),
            "fused": round(float(item.fused), 6),
        },
        "type": found["type"],
        "status": found["status"],
        "metadata": found.get("metadata") or {},
        "user_id": found.get("user_id"),
        "session_id": found.get("session_id"),
        "supersedes": found.get("supersedes"),
        "superseded_by": found.get("superseded_by"),
        "provenance": found.get("provenance"),
        "created_at": found.get("created_at"),
    }


@dataclass(frozen=True)
class Search:
    """One candidate search: the selection, the query's vectors, how many per list."""

    selection: Selection
    vector: Sequence[float]
    sparse: SparseVector | None
    limit: int
    fingerprint: str
    points: MemoryPoints


@dataclass(frozen=True)
class Scope:
    """Whose memories a hit must be, in which statuses, and unexpired at `now` (checked on
    every payload read: a lapsed memory leaves recall before the sweeper removes its point)."""

    tenant_id: str
    agent_id: str
    statuses: tuple[str, ...]
    now: datetime

    def holds(self, hit: HybridHit) -> bool:
        return (
            hit.payload.get("tenant_id") == self.tenant_id
            and hit.payload.get("agent_id") == self.agent_id
            and hit.payload.get("status") in self.statuses
            and not lapsed(hit.payload, self.now)
        )


@dataclass(frozen=True)
class Ranking:
    """How the candidates are ordered: the query, the mode, recency and the lexical encoder."""

    query: str
    mode: Mode
    half_life_days: float | None
    encoder: str


class Recall:
    """Every search names the tenant and the agent; each hit's payload is checked again."""

    def __init__(
        self,
        embedder: Embedder,
        vectors: MemoryPoints,
        *,
        min_score: float | None = None,
        fusion: FusionSettings | None = None,
        space: Callable[[], tuple[Embedder, MemoryPoints]] | None = None,
    ) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.space = space or (lambda: (self.embedder, self.vectors))
        self.configured_floor = min_score
        self.fusion = fusion or FusionSettings()

    def _rank(
        self, hits: Sequence[HybridHit], ranking: Ranking, text_of: Callable[[HybridHit], str]
    ) -> list[Ranked]:
        return rank(
            hits,
            ranking.query,
            ranking.mode,
            self.fusion,
            half_life_days=ranking.half_life_days,
            now=datetime.now(UTC),
            text_of=text_of,
            encoder=ranking.encoder,
        )

    async def _ranked_whole(
        self, search: Search, scope: Scope, ranking: Ranking
    ) -> tuple[int, list[Ranked]]:
        """Every candidate with its payload, checked, then ranked (recency needs every age)."""
        hits = await search.points.candidates(
            search.selection, search.vector, search.sparse, search.limit,
            fingerprint=search.fingerprint,
        )  # fmt: skip
        hits = [hit for hit in hits if scope.holds(hit)]
        return len(hits), self._rank(hits, ranking, payload_content)

    async def _ranked_on_demand(
        self, search: Search, scope: Scope, ranking: Ranking, floor: float, top_k: int
    ) -> tuple[int, list[Ranked]] | None:
        """Candidates ranked by their scores, payloads read only where they decide the answer:
        the best lexical hit (its coverage of the query sets the fusion weight) and the ranked
        prefix the floor walks, re-sorted once their memory ids are known (ties go to the smaller
        id, as on the whole path). None when a read point is gone or outside the scope: the
        whole path decides then."""
        hits = await search.points.candidates(
            search.selection, search.vector, search.sparse, search.limit,
            fingerprint=search.fingerprint, with_payload=False,
        )  # fmt: skip
        wanted = whole_identifiers(ranking.query)
        texts: dict[str, str] = {}
        best = best_lexical(hits) if ranking.mode == "hybrid" and not wanted else None
        if best is not None and self.fusion.method == "convex":
            for engine_id, read_best in (await search.points.hit_payloads([best])).items():
                texts[engine_id] = payload_content(read_best)
        ranked = self._rank(hits, ranking, lambda hit: texts.get(hit.id, ""))
        prefix = needing_content(ranked, floor, top_k)
        read = await search.points.hit_payloads([item.hit for item in prefix])
        if len(read) != len(prefix) or not all(scope.holds(hit) for hit in read.values()):
            return None
        complete = []
        for item in prefix:
            whole = read[item.hit.id]
            complete.append(
                Ranked(whole, item.fused, matches(whole, wanted, payload_content(whole)))
            )
        complete.sort(key=lambda item: (-item.fused, -item.hit.dense, item.hit.id))
        return len(hits), complete

    def floor(self, requested: float | None) -> float:
        """The caller's floor, else the configured one, else the embedder model's default."""
        embedder, _ = self.space()
        return chosen_floor(requested, self.configured_floor, embedder.provenance.model_id)

    async def recall(
        self,
        tenant_id: str,
        agent_id: str,
        query: str,
        top_k: int,
        *,
        min_score: float | None = None,
        types: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        mode: Mode = "hybrid",
        filter: MemoryFilter | None = None,
        recency_half_life_days: float | None = None,
    ) -> RecallResult:
        """Candidates within (tenant, agent, filter), ranked by the mode, then the floor; the
        embedder and collection are read once, so a reindex's switch never splits them."""
        embedder, vectors = self.space()
        if vectors.lexical is None and mode != "dense":
            if mode == "lexical":
                raise LexicalOff("lexical recall is off on this deployment (ENGRAM_MEMORY_LEXICAL)")
            mode = "dense"
        mine = embedder.provenance.fingerprint
        theirs = await vectors.fingerprint()
        if mine != theirs:
            raise EmbedderMismatch(theirs, mine)
        wanted = tuple(statuses) if statuses else DEFAULT_STATUSES
        selection = Selection.of_agent(
            tenant_id, agent_id, statuses=wanted, types=types, filter=filter
        )
        floor = chosen_floor(min_score, self.configured_floor, embedder.provenance.model_id)
        if selection.wanted_types() == ():
            return RecallResult([], floor, 0, mode)
        embedded = await embedder.embed_queries([query])
        lexical = vectors.lexical
        sparse = query_vector(query, lexical) if lexical is not None else None
        search = Search(
            selection,
            embedded.vectors[0],
            sparse if sparse is not None and sparse.indices else None,
            min(max(MIN_CANDIDATES, 4 * top_k), MAX_CANDIDATES),
            mine,
            vectors,
        )
        scope = Scope(tenant_id, agent_id, wanted, datetime.now(UTC))
        ranking = Ranking(query, mode, recency_half_life_days, lexical or LEXICAL_ENCODER)
        found: tuple[int, list[Ranked]] | None = None
        if recency_half_life_days is None:
            found = await self._ranked_on_demand(search, scope, ranking, floor, top_k)
        if found is None:
            found = await self._ranked_whole(search, scope, ranking)
        candidates, ranked = found
        floored = floor_ranked(ranked, floor, top_k)
        results = [_result(item) for item in floored.kept]
        log.info(
            "recall",
            extra={
                "tenant_id": tenant_id,
                "agent_id": agent_id,
                "mode": mode,
                "candidates": candidates,
                "returned": len(results),
                "dropped_below_floor": floored.dropped,
                "identifier_matches": sum(1 for item in floored.kept if item.identifier_match),
            },
        )
        return RecallResult(results, floor, floored.dropped, mode)
