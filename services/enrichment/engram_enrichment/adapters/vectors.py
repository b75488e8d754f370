"""The knowledge collection: one point per live fact, payload ids only (no content)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram_vectors import CollectionNotFound, Hit, Point, VectorStore


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

    async def put(
        self,
        tenant_id: str,
        entity_id: str,
        fact_id: str,
        vector: Sequence[float],
        fingerprint: str,
    ) -> None:
        """Write a fact's point; refuses vectors of another embedder."""
        payload = {"tenant_id": tenant_id, "entity_id": entity_id, "fact_id": fact_id}
        point = Point(point_id(tenant_id, fact_id), vector, payload)
        await self.store.upsert(self.collection, [point], fingerprint=fingerprint)

    async def remove(self, tenant_id: str, fact_ids: Sequence[str]) -> None:
        """Delete the points of facts that are gone; unknown ids are ignored."""
        if fact_ids:
            await self.store.delete(self.collection, [point_id(tenant_id, f) for f in fact_ids])

    async def search(
        self, tenant_id: str, vector: Sequence[float], top_k: int, *, fingerprint: str
    ) -> list[Hit]:
        """The raw top-k within one tenant (the predicate is always present)."""
        query: dict[str, Any] = {"tenant_id": tenant_id}
        return await self.store.search(
            self.collection, vector, top_k, filter=query, fingerprint=fingerprint
        )
