"""The knowledge collection: one point per live fact, article section and passage, with a dense vector
from the embedder and, for hybrid search, a lexical one of the same text."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from engram_enrichment.domain.model import ArticleSection
from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.domain.reindex import item_of
from engram_enrichment.ports import ARTICLE_SECTION, FACT, KINDS, PASSAGE, TEXT, StoredPassage
from engram_vectors import (
    Exists,
    HybridHit,
    Listed,
    PayloadFilter,
    Point,
    SparseVector,
)
from engram_vectors.lexical import document_vector
from engram_vectors.opening import ServiceCollection
from engram_vectors.port import VectorStore

log = logging.getLogger(__name__)

SCOPE = "scope"
"""The payload field holding `tenant_id:kind`, what a search by kind filters on alone."""
KEYWORD_INDEXES = ("tenant_id", "kind", "document_id", SCOPE)
"""Payload fields the collection's queries filter on, each with a keyword index: an unindexed
`kind` beside the tenant made every passage search check each point's payload (40 ms against
5 ms for the engine's part at 20k passages)."""
UNSCOPED: PayloadFilter = {SCOPE: Exists(False), "tenant_id": Exists(True), "kind": Exists(True)}
"""Points written before `scope` was: the backfill's selection, which it empties."""
BACKFILL_BATCH = 512
"""Points read and written per backfill round, to bound one engine call."""


def point_id(tenant_id: str, fact_id: str) -> str:
    """Point ids start with the tenant, like entity ids."""
    return f"{tenant_id}:{fact_id}"


def scope_of(tenant_id: str, kind: str) -> str:
    """Tenant and kind as one keyword: the unoptimised engine checks each filter condition on
    every point, and one condition took half the time of the two at 100k points. Kinds hold no
    ':', so no other tenant's scope can spell the same."""
    return f"{tenant_id}:{kind}"


def scope_groups(listed: Sequence[Listed]) -> dict[str, list[str]]:
    """Point ids by the scope their payload's tenant and kind give, for one write per scope."""
    groups: dict[str, list[str]] = {}
    for item in listed:
        scope = scope_of(str(item.payload["tenant_id"]), str(item.payload["kind"]))
        groups.setdefault(scope, []).append(item.id)
    return groups


def candidate_filter(tenant_id: str, kinds: Sequence[str] | None) -> PayloadFilter:
    """The tenant's scopes of these kinds as the one condition; the tenant alone for all kinds."""
    if kinds:
        return {SCOPE: [scope_of(tenant_id, kind) for kind in kinds]}
    return {"tenant_id": tenant_id}


class KnowledgeVectors(ServiceCollection):
    """The collection tied to one embedder fingerprint; every search names the tenant. Texts
    are encoded with the lexical encoder the collection was built with."""

    def __init__(self, store: VectorStore, collection: str, *, lexical: bool = True) -> None:
        super().__init__(store, collection, lexical=lexical, adopts=True)

    async def open(self, dimension: int, fingerprint: str) -> str:
        """Open as every service collection does, then scope the points written before `scope`
        was, so searches by kind find them."""
        held = await super().open(dimension, fingerprint)
        await self.backfill_scope()
        return held

    async def backfill_scope(self) -> int:
        """Set `scope` on points that lack it, a batch at a time; each batch is written before the
        next is read, so a crash midway leaves only unscoped points to redo. Returns how many."""
        started = time.perf_counter()
        scoped = batches = 0
        seen: set[str] = set()
        while batch := await self.store.scroll(self.collection, UNSCOPED, limit=BACKFILL_BATCH):
            ids = {item.id for item in batch}
            if ids <= seen:
                log.warning(
                    "knowledge scope backfill made no progress",
                    extra={"collection": self.collection, "points": len(ids)},
                )
                break
            seen |= ids
            for scope, members in scope_groups(batch).items():
                await self.store.set_payload(self.collection, members, {SCOPE: scope})
            scoped += len(batch)
            batches += 1
        if scoped:
            log.info(
                "knowledge scope backfilled",
                extra={
                    "collection": self.collection,
                    "points": scoped,
                    "batches": batches,
                    "seconds": round(time.perf_counter() - started, 3),
                },
            )
        return scoped

    def _point(
        self,
        tenant_id: str,
        item_id: str,
        vector: Sequence[float],
        payload: dict[str, Any],
        text: str,
    ) -> Point:
        """A point whose lexical vector (when this collection keeps them) is of the text that was
        embedded, kept in the payload for identifier matches; without, the payload is ids only."""
        payload = {**payload, SCOPE: scope_of(tenant_id, payload["kind"])}
        if self.lexical is None:
            return Point(point_id(tenant_id, item_id), vector, payload)
        full = {**payload, TEXT: text}
        sparse = document_vector(text, self.lexical)
        return Point(point_id(tenant_id, item_id), vector, full, sparse=sparse)

    async def put_facts(
        self,
        tenant_id: str,
        facts: Sequence[tuple[str, str, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Write facts' points `(entity_id, fact_id, text embedded, vector)` in one upsert, with
        the embedder's own provenance; refuses another embedder's."""
        points = [
            self._point(
                tenant_id,
                fact_id,
                vector,
                {
                    "tenant_id": tenant_id,
                    "entity_id": entity_id,
                    "kind": FACT,
                    "fact_id": fact_id,
                    "provenance": provenance,
                },
                text,
            )
            for entity_id, fact_id, text, vector in facts
        ]
        if points:
            await self.store.upsert(self.collection, points, fingerprint=fingerprint)

    async def put_sections(
        self,
        tenant_id: str,
        sections: Sequence[tuple[str, ArticleSection, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Write (or replace) sections' points `(entity_id, section, text embedded, vector)` in
        one upsert: text hash, cited ids, the embedder's provenance."""
        points = [
            self._point(
                tenant_id,
                section.section_id,
                vector,
                {
                    "tenant_id": tenant_id,
                    "entity_id": entity_id,
                    "kind": ARTICLE_SECTION,
                    "section_id": section.section_id,
                    "text_sha256": section.text_sha256,
                    "fact_ids": list(section.fact_ids),
                    "record_ids": list(section.record_ids),
                    "provenance": provenance,
                },
                text,
            )
            for entity_id, section, text, vector in sections
        ]
        if points:
            await self.store.upsert(self.collection, points, fingerprint=fingerprint)

    async def put_passages(
        self,
        tenant_id: str,
        passages: Sequence[tuple[PassageRow, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Write (or replace) passages' points `(row, text embedded, vector)` in one upsert: the
        document it cites, its text hash and the embedded text's (a later version may copy the
        vector); the row holds the citation."""
        points = [
            self._point(
                tenant_id,
                row.passage_id,
                vector,
                {
                    "tenant_id": tenant_id,
                    "kind": PASSAGE,
                    "passage_id": row.passage_id,
                    "document_id": row.passage.document_id,
                    "text_sha256": row.passage.text_sha256,
                    "embedded_sha256": row.embedded_sha256,
                    "provenance": provenance,
                },
                text,
            )
            for row, text, vector in passages
        ]
        if points:
            await self.store.upsert(self.collection, points, fingerprint=fingerprint)

    async def remove_passages_of(self, tenant_id: str, document_id: str) -> None:
        """Delete every passage point of a document, whatever its version."""
        await self.store.delete_by_filter(
            self.collection,
            {"tenant_id": tenant_id, "kind": PASSAGE, "document_id": document_id},
        )

    async def count_passages_of(self, tenant_id: str, document_ids: Sequence[str]) -> int:
        """How many passage points these documents still have (prune verification)."""
        if not document_ids:
            return 0
        return await self.store.count(
            self.collection,
            {"tenant_id": tenant_id, "kind": PASSAGE, "document_id": list(document_ids)},
        )

    async def passage_points(
        self, tenant_id: str, passage_ids: Sequence[str]
    ) -> list[StoredPassage]:
        """The stored points of those passages that have one, vectors included, in one read."""
        if not passage_ids:
            return []
        points = await self.store.get(
            self.collection, [point_id(tenant_id, i) for i in passage_ids]
        )
        return [
            StoredPassage(str(p.payload["passage_id"]), list(p.vector), dict(p.payload))
            for p in points
            if p.payload.get("tenant_id") == tenant_id and p.payload.get("kind") == PASSAGE
        ]

    async def payloads(self, tenant_id: str, item_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The stored payloads of these facts' or sections' points (missing ones left out)."""
        if not item_ids:
            return []
        points = await self.store.get(self.collection, [point_id(tenant_id, i) for i in item_ids])
        return [dict(p.payload) for p in points if p.payload.get("tenant_id") == tenant_id]

    async def points(self, tenant_id: str, item_ids: Sequence[str]) -> dict[str, Point]:
        """Stored points by item id, vectors included (a reindex's spot check)."""
        if not item_ids:
            return {}
        found = await self.store.get(self.collection, [point_id(tenant_id, i) for i in item_ids])
        return {item_of(p.payload): p for p in found if p.payload.get("tenant_id") == tenant_id}

    async def counts(self) -> dict[str, int]:
        """Points of each kind across tenants (a reindex's count check)."""
        return {kind: await self.store.count(self.collection, {"kind": kind}) for kind in KINDS}

    async def remove(self, tenant_id: str, item_ids: Sequence[str]) -> None:
        """Delete the points of facts or sections that are gone; unknown ids are ignored."""
        if item_ids:
            await self.store.delete(self.collection, [point_id(tenant_id, i) for i in item_ids])

    async def candidates(
        self,
        tenant_id: str,
        vector: Sequence[float],
        sparse: SparseVector | None,
        limit: int,
        *,
        fingerprint: str,
        kinds: Sequence[str] | None = None,
    ) -> list[HybridHit]:
        """Dense and lexical candidates within one tenant (of these kinds, when named: one
        `scope` condition), each with both scores; word weights come from this tenant's points."""
        return await self.store.hybrid_search(
            self.collection,
            vector=vector,
            sparse=sparse if self.lexical else None,
            limit=limit,
            filter=candidate_filter(tenant_id, kinds),
            fingerprint=fingerprint,
            idf_filter={"tenant_id": tenant_id},
        )
