"""Enrichment with recall on, the embedding service played in-process by the same embedder."""

from __future__ import annotations

from typing import Any

from engram_embedders import Embedder
from engram_embedders.hashing import HashingEmbedder
from engram_enrichment.adapters.vectors import KnowledgeVectors
from engram_enrichment.domain.schema import Schema
from engram_enrichment.handlers import EnrichmentHandlers
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.search import KnowledgeSearch
from engram_events import Envelope, new_event
from engram_events.catalog import EMBEDDING_BULK_COMPUTED
from engram_events.payloads.embeddings import EmbeddedItem, EmbeddingComputed, VectorProvenance
from engram_vectors import ExactNumpyStore
from tests.unit.enrichment.fakes import MemoryPassageRows, MemoryStore


class Harness:
    """Enrichment with recall on, and the embedding service played by the same embedder."""

    def __init__(self, vectors: KnowledgeVectors | None = None) -> None:
        self.embedder: Embedder = HashingEmbedder(dimension=64)
        self.knowledge = KnowledgeBase(MemoryStore())
        self.vectors = vectors or KnowledgeVectors(ExactNumpyStore(), "knowledge")
        self.passages = MemoryPassageRows()
        self.handlers = EnrichmentHandlers(self.knowledge, Schema(), self.vectors, self.passages)
        self.search = KnowledgeSearch(
            self.embedder, self.vectors, self.knowledge, passages=self.passages
        )

    async def open(self) -> None:
        p = self.embedder.provenance
        await self.vectors.open(p.dimension, p.fingerprint)

    async def record(self, event: Envelope[Any]) -> list[Envelope[Any]]:
        published = list(await self.handlers.on_record_upserted(event))
        await self.embed(published)
        return published

    async def passage(self, *events: Envelope[Any], embed: bool = True) -> list[Envelope[Any]]:
        answers = await self.handlers.on_passage_upserted_batch(list(events))
        published = [e for answer in answers if not isinstance(answer, Exception) for e in answer]
        if embed:
            await self.embed(published)
        return published

    async def tombstone(self, event: Envelope[Any], *, embed: bool = True) -> list[Envelope[Any]]:
        published = list(await self.handlers.on_record_tombstoned(event))
        if embed:
            await self.embed(published)
        return published

    async def embed(self, published: list[Envelope[Any]]) -> None:
        for request in [e for e in published if e.event_type == "embedding.bulk_requested"]:
            await self.handlers.on_embedding_computed(await self.computed(request))

    async def computed(self, request: Envelope[Any]) -> Envelope[Any]:
        items = request.payload.items
        embedded = await self.embedder.embed([i.text for i in items])
        p = embedded.provenance
        payload = EmbeddingComputed(
            request_id=request.payload.request_id,
            requester=request.payload.requester,
            purpose=request.payload.purpose,
            items=[
                EmbeddedItem(item_id=i.item_id, vector=[float(x) for x in v])
                for i, v in zip(items, embedded.vectors, strict=True)
            ],
            provenance=VectorProvenance(
                provider=p.provider,
                model_id=p.model_id,
                weights_sha256=p.weights_sha256,
                dimension=p.dimension,
                normalized=p.normalized,
                precision=p.precision,
                fingerprint=p.fingerprint,
            ),
        )
        return new_event(EMBEDDING_BULK_COMPUTED, payload, tenant_id=request.tenant_id)


async def harness(vectors: KnowledgeVectors | None = None) -> Harness:
    h = Harness(vectors)
    await h.open()
    return h


def facts(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in results if r["kind"] == "fact"]


def sections(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in results if r["kind"] == "article_section"]


def passages(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in results if r["kind"] == "passage"]
