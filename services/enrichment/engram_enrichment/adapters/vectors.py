"""The knowledge collection: one point per live fact and per article section, payload ids only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram_enrichment.domain.model import ArticleSection
from engram_vectors import CollectionNotFound, Hit, Point, VectorStore

FACT = "fact"
ARTICLE_SECTION = "article_section"


def point_id(tenant_id: str, fact_id: str) -> str:
    """Point ids start with the tenant, like entity ids."""
    return f"{tenant_id}:{fact_id}"


class KnowledgeVectors:
    """The collection tied to one embedder fingerprint; every search names the tenant."""

    def __init__(self, store: VectorStore, collection: str) -> None:
        self.store = store
        self.collection = collection

    async def open(self, dimension: int, fingerprint: str) -> str:
        """Create the collection for this embedder if new; return the fingerprint it holds."""
        try:
            return await self.store.collection_fingerprint(self.collection)
        except CollectionNotFound:
            await self.store.ensure_collection(self.collection, dimension, fingerprint)
            return fingerprint

    async def fingerprint(self) -> str:
        """The embedder fingerprint stored with the collection."""
        return await self.store.collection_fingerprint(self.collection)

    async def put_facts(
        self,
        tenant_id: str,
        facts: Sequence[tuple[str, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Write facts' points `(entity_id, fact_id, vector)` in one upsert, with the embedder's
        own provenance; refuses another embedder's."""
        points = [
            Point(
                point_id(tenant_id, fact_id),
                vector,
                {
                    "tenant_id": tenant_id,
                    "entity_id": entity_id,
                    "kind": FACT,
                    "fact_id": fact_id,
                    "provenance": provenance,
                },
            )
            for entity_id, fact_id, vector in facts
        ]
        if points:
            await self.store.upsert(self.collection, points, fingerprint=fingerprint)

    async def put_sections(
        self,
        tenant_id: str,
        sections: Sequence[tuple[str, ArticleSection, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Write (or replace) sections' points `(entity_id, section, vector)` in one upsert: text
        hash, cited ids, the embedder's provenance."""
        points = [
            Point(
                point_id(tenant_id, section.section_id),
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
            )
            for entity_id, section, vector in sections
        ]
        if points:
            await self.store.upsert(self.collection, points, fingerprint=fingerprint)

    async def payloads(self, tenant_id: str, item_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The stored payloads of these facts' or sections' points (missing ones left out)."""
        if not item_ids:
            return []
        points = await self.store.get(self.collection, [point_id(tenant_id, i) for i in item_ids])
        return [dict(p.payload) for p in points if p.payload.get("tenant_id") == tenant_id]

    async def remove(self, tenant_id: str, item_ids: Sequence[str]) -> None:
        """Delete the points of facts or sections that are gone; unknown ids are ignored."""
        if item_ids:
            await self.store.delete(self.collection, [point_id(tenant_id, i) for i in item_ids])

    async def search(
        self, tenant_id: str, vector: Sequence[float], top_k: int, *, fingerprint: str
    ) -> list[Hit]:
        """The raw top-k within one tenant (the predicate is always present)."""
        query: dict[str, Any] = {"tenant_id": tenant_id}
        return await self.store.search(
            self.collection, vector, top_k, filter=query, fingerprint=fingerprint
        )
