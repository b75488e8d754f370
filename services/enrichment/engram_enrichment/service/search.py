"""Knowledge search: embed the query here, refuse a foreign vector space, retrieve dense and
lexical candidates within the tenant (of the kinds asked for), rank them by the mode, floor,
join the entity documents and the passages' citations."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engram_embedders import Embedder
from engram_enrichment.domain.model import Entity, Fact
from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.domain.passages import passage_result
from engram_enrichment.domain.sections import render_section, text_sha256
from engram_enrichment.ports import (
    ARTICLE_SECTION,
    FACT,
    PASSAGE,
    TEXT,
    KnowledgeIndex,
    PassageRows,
)
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_vectors import HybridHit
from engram_vectors.floor import chosen_floor
from engram_vectors.lexical import LEXICAL_ENCODER, query_vector
from engram_vectors.ranking import FusionSettings, Mode, Ranked, floor_ranked, rank

log = logging.getLogger(__name__)
SEARCHABLE = ("active", "contested")
MIN_CANDIDATES = 50
"""Each retrieval's candidate list is at least this long (4x top_k beyond that, as memory
recall), so fusion has more than the final top-k to choose from."""
MAX_CANDIDATES = 400


class EmbedderMismatch(Exception):
    """The query embedder's fingerprint differs from the collection's."""


class LexicalOff(Exception):
    """Lexical search was asked for where the service keeps no lexical vectors."""


@dataclass(frozen=True)
class SearchResult:
    """Facts and sections at or above the floor (or matching one of the query's identifiers),
    the floor used, how many of the raw top-k it dropped, and the mode that ranked them."""

    results: list[dict[str, Any]]
    floor: float
    dropped_below_floor: int
    mode: Mode = "hybrid"


def candidate_pool(top_k: int) -> int:
    """How many candidates each retrieval returns: never fewer than the answer asks for."""
    return max(top_k, min(max(MIN_CANDIDATES, 4 * top_k), MAX_CANDIDATES))


def point_text(hit: HybridHit) -> str:
    """The text a point's vectors are of, where the query's identifiers are looked for."""
    return str(hit.payload.get(TEXT) or "")


def scores(item: Ranked) -> dict[str, float | None]:
    """Every score that placed a hit: cosine, lexical (None without a lexical query), fused."""
    lexical = item.hit.lexical
    return {
        "dense": round(float(item.hit.dense), 6),
        "lexical": None if lexical is None else round(float(lexical), 6),
        "fused": round(float(item.fused), 6),
    }


def _fact(fact: Fact) -> dict[str, Any]:
    return {
        "fact_id": fact.fact_id,
        "attribute": fact.attribute,
        "value": fact.value,
        "status": fact.status,
        "contested": fact.status == "contested",
        "support": [s.shown() for s in fact.support],
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
    support = {(s.record_id, s.revision): s.shown() for f in live for s in f.support}
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


class PassageWindows:
    """The rows of the passages among ranked hits, read `window` hits at a time in rank order:
    a search whose first hits are live reads top_k rows once, not every candidate's."""

    def __init__(
        self,
        rows: PassageRows | None,
        tenant_id: str,
        hits: Sequence[HybridHit],
        window: int,
    ) -> None:
        self.source = rows
        self.tenant_id = tenant_id
        self.hits = hits
        self.window = max(1, window)
        self.read_until = 0
        self.reads = 0
        self.rows: dict[str, PassageRow] = {}

    async def row(self, position: int) -> PassageRow | None:
        """The stored row of the passage hit at `position`, reading its window on first need."""
        while position >= self.read_until:
            await self._read_next()
        return self.rows.get(str(self.hits[position].payload.get("passage_id")))

    async def _read_next(self) -> None:
        """One read of the passage rows among the next window of hits."""
        window = self.hits[self.read_until : self.read_until + self.window]
        self.read_until += self.window
        ids = [str(h.payload.get("passage_id")) for h in window if h.payload.get("kind") == PASSAGE]
        if ids and self.source is not None:
            self.rows.update(await self.source.get_many(self.tenant_id, ids))
            self.reads += 1


class KnowledgeSearch:
    """Hits are re-checked against the entity documents: status and support come from there."""

    def __init__(
        self,
        embedder: Embedder,
        vectors: KnowledgeIndex,
        knowledge: KnowledgeBase,
        *,
        min_score: float | None = None,
        fusion: FusionSettings | None = None,
        passages: PassageRows | None = None,
        space: Callable[[], tuple[Embedder, KnowledgeIndex]] | None = None,
    ) -> None:
        self.space = space or (lambda: (embedder, vectors))
        self.embedder = embedder
        self.passages = passages
        self.knowledge = knowledge
        self.configured_floor = min_score
        self.fusion = fusion or FusionSettings()

    def floor(self, requested: float | None, embedder: Embedder | None = None) -> float:
        """The caller's floor, else the configured one, else the embedder model's default."""
        model = (embedder or self.space()[0]).provenance.model_id
        return chosen_floor(requested, self.configured_floor, model)

    async def search(
        self,
        tenant_id: str,
        query: str,
        top_k: int,
        *,
        min_score: float | None = None,
        mode: Mode = "hybrid",
        kinds: Sequence[str] | None = None,
        view: Callable[[Entity], Entity] | None = None,
    ) -> SearchResult:
        """Candidates within the tenant ranked by the mode, then the floor (which never drops an
        exact identifier match); hits no longer live are skipped and the next ones taken. The
        embedder and collection are read once, so a reindex's switch never splits them. `view`
        judges facts and sections on each entity as seen in time (`timeline.in_time`)."""
        embedder, vectors = self.space()
        if vectors.lexical is None and mode != "dense":
            if mode == "lexical":
                raise LexicalOff(
                    "lexical knowledge search is off on this deployment (ENGRAM_ENRICHMENT_LEXICAL)"
                )
            mode = "dense"
        mine = embedder.provenance.fingerprint
        if await vectors.fingerprint() != mine:
            raise EmbedderMismatch("query embedder differs from the collection's embedder")
        embedded = await embedder.embed_queries([query])
        lexical = vectors.lexical
        sparse = query_vector(query, lexical) if lexical is not None else None
        hits = await vectors.candidates(
            tenant_id,
            embedded.vectors[0],
            sparse if sparse is not None and sparse.indices else None,
            candidate_pool(top_k),
            fingerprint=mine,
            kinds=kinds,
        )
        hits = [hit for hit in hits if hit.payload.get("tenant_id") == tenant_id]
        ranked = rank(
            hits,
            query,
            mode,
            self.fusion,
            now=datetime.now(UTC),
            text_of=point_text,
            encoder=lexical or LEXICAL_ENCODER,
        )
        floor = self.floor(min_score, embedder)
        dropped = floor_ranked(ranked, floor, top_k).dropped
        passing = floor_ranked(ranked, floor, len(ranked)).kept
        entities: dict[str, Entity | None] = {}
        passages = PassageWindows(self.passages, tenant_id, [item.hit for item in passing], top_k)
        results: list[dict[str, Any]] = []
        matches = 0
        for position, item in enumerate(passing):
            if len(results) == top_k:
                break
            found = await self._current(tenant_id, item.hit, entities, passages, position, view)
            if found is not None:
                matches += item.identifier_match
                results.append(
                    {
                        **found,
                        "provenance": item.hit.payload.get("provenance"),
                        "score": round(float(item.hit.dense), 6),
                        "scores": scores(item),
                    }
                )
        log.info(
            "knowledge search",
            extra={
                "tenant_id": tenant_id,
                "mode": mode,
                "candidates": len(hits),
                "returned": len(results),
                "dropped_below_floor": dropped,
                "identifier_matches": matches,
                "entities_read": len(entities),
                "passage_reads": passages.reads,
            },
        )
        return SearchResult(results, floor, dropped, mode)

    async def _current(
        self,
        tenant_id: str,
        hit: HybridHit,
        entities: dict[str, Entity | None],
        passages: PassageWindows,
        position: int,
        view: Callable[[Entity], Entity] | None = None,
    ) -> dict[str, Any] | None:
        """The fact, section or passage a hit stands for as held now (None once it is not
        live), reading each entity once per search."""
        if hit.payload.get("kind") == PASSAGE:
            row = await passages.row(position)
            if row is None or row.passage.text_sha256 != hit.payload.get("text_sha256"):
                return None
            return passage_result(row)
        entity_id = str(hit.payload.get("entity_id", ""))
        if entity_id not in entities:
            loaded = await self.knowledge.load(tenant_id, entity_id)
            entities[entity_id] = view(loaded) if loaded is not None and view else loaded
        entity = entities[entity_id]
        if entity is None:
            return None
        if hit.payload.get("kind") == ARTICLE_SECTION:
            return section_result(entity, hit.payload)
        return fact_result(entity, str(hit.payload.get("fact_id")))
