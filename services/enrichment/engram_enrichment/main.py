"""Enrichment's composition root."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
from fastapi import FastAPI

from engram_embedders import Embedder, Provenance
from engram_embedders.moving import Embedded, ReindexDocument
from engram_enrichment.adapters.chat import ChatCompletionsSummariser
from engram_enrichment.adapters.passages import INDEXES as PASSAGE_INDEXES
from engram_enrichment.adapters.passages import MongoPassageRows
from engram_enrichment.adapters.reindex import REINDEX, STORE, KnowledgeWalkStore
from engram_enrichment.adapters.relations import INDEXES as RELATION_INDEXES
from engram_enrichment.adapters.relations import MongoRelationRows
from engram_enrichment.adapters.schema_file import load_schema
from engram_enrichment.adapters.store import INDEXES, MongoEntityStore
from engram_enrichment.adapters.vectors import KEYWORD_INDEXES, KnowledgeVectors
from engram_enrichment.api import ROUTERS
from engram_enrichment.api.dependencies import EnrichmentDeps
from engram_enrichment.config import EnrichmentSettings
from engram_enrichment.handlers import SERVICE, EnrichmentHandlers
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.moving import MovingKnowledge
from engram_enrichment.service.reindex import KnowledgeReindexer
from engram_enrichment.service.relations import RelationGraph
from engram_enrichment.service.resolution import Resolutions
from engram_enrichment.service.search import KnowledgeSearch
from engram_enrichment.service.summaries import Summaries
from engram_events.catalog import (
    EMBEDDING_BULK_COMPUTED,
    EMBEDDING_COMPUTED,
    PASSAGE_UPSERTED,
    PASSAGES_WITHDRAWN,
    RECORD_TOMBSTONED,
    RECORD_UPSERTED,
)
from engram_platform.app import service_app
from engram_platform.dependencies import install
from engram_platform.indexes import merge
from engram_platform.runtime import ConnectedRuntime, Runtime
from engram_vectors import vector_store_from
from engram_vectors.opening import held_fingerprint, open_at_start
from engram_vectors.port import VectorStore


def knowledge_store(settings: EnrichmentSettings) -> VectorStore:
    """The vector store the knowledge collections live in (embedded, or a Qdrant server)."""
    return vector_store_from(
        settings.qdrant_url,
        settings.vector_path,
        api_key=settings.qdrant_api_key,
        keyword_indexes=KEYWORD_INDEXES,
    )


async def open_knowledge(
    settings: EnrichmentSettings,
    provenance: Provenance,
    store: VectorStore | None = None,
    collection: str | None = None,
) -> KnowledgeVectors:
    """A knowledge collection (the configured one by default) for an embedder, created if new;
    search refuses a foreign vector space, start-up a collection of an unknown lexical encoder
    (an earlier one is adopted; said in the log: exception messages are left out of it)."""
    name = collection or settings.collection
    vectors = KnowledgeVectors(store or knowledge_store(settings), name, lexical=settings.lexical)
    await open_at_start(
        vectors.open,
        provenance.dimension,
        provenance.fingerprint,
        collection=name,
        remedy="remove the collection (or name another with ENGRAM_ENRICHMENT_COLLECTION) and "
        "rebuild the knowledge from the records (facts and sections are embedded when they "
        "change), or set ENGRAM_ENRICHMENT_LEXICAL to match",
        reader="search",
    )
    return vectors


async def open_recall(
    settings: EnrichmentSettings,
    knowledge: KnowledgeBase,
    passages: MongoPassageRows,
    db: Any,
) -> tuple[MovingKnowledge, KnowledgeSearch, KnowledgeReindexer]:
    """The knowledge collection search reads (the configured one, or the one a reindex switched
    to), the search over it with its embedder, and the reindexer that may move it (resumed
    when a move was under way)."""
    records = ReindexDocument(db, REINDEX, STORE)
    moved_to, job = await records.load()
    active = moved_to or settings.embedder_space(settings.collection)
    store = knowledge_store(settings)
    held = await held_fingerprint(store, active.collection)
    embedder, adopted = await settings.embedder_holding(active, held)
    opened = await open_knowledge(settings, embedder.provenance, store, active.collection)

    async def open_target(name: str, target: Embedder) -> KnowledgeVectors:
        return await open_knowledge(settings, target.provenance, opened.store, name)

    reembeds = moved_to is not None or adopted
    vectors = MovingKnowledge(Embedded(embedder, opened), reembeds=reembeds)
    reindexer = KnowledgeReindexer(
        records,
        KnowledgeWalkStore(db),
        vectors,
        active=active,
        open_vectors=open_target,
        base_collection=settings.collection,
        **settings.reindex_options(),
    )
    if job is not None:
        await reindexer.resume(job)
    search = KnowledgeSearch(
        embedder,
        vectors,
        knowledge,
        min_score=settings.min_score,
        passages=passages,
        space=vectors.space,
    )
    return vectors, search, reindexer


def build_summaries(settings: EnrichmentSettings) -> tuple[Summaries, httpx.AsyncClient | None]:
    """The chat-completions summariser when configured (with its client); otherwise off."""
    if not settings.summaries_enabled:
        return Summaries(), None
    assert settings.summary_base_url is not None and settings.summary_model is not None
    client = httpx.AsyncClient(timeout=settings.summary_timeout_seconds)
    key = settings.summary_api_key.get_secret_value() if settings.summary_api_key else None
    summariser = ChatCompletionsSummariser(
        client,
        settings.summary_base_url,
        settings.summary_model,
        api_key=key,
        max_tokens=settings.summary_max_tokens,
    )
    return Summaries(summariser), client


def closing(client: httpx.AsyncClient) -> Callable[[], Coroutine[Any, Any, None]]:
    """A background task that only closes the client when the service stops."""

    async def wait_then_close() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await client.aclose()

    return wait_then_close


def create_app(
    settings: EnrichmentSettings | None = None, *, install_global: bool = True
) -> FastAPI:
    """Consumes record upserts and tombstones; serves knowledge to the gateway internally."""
    settings = settings or EnrichmentSettings()
    runtime = Runtime.build(
        SERVICE,
        settings,
        install_global=install_global,
        indexes=merge(INDEXES, PASSAGE_INDEXES, RELATION_INDEXES),
    )
    summaries, summary_client = build_summaries(settings)
    reindexers: list[KnowledgeReindexer] = []

    async def register(rt: ConnectedRuntime, app: FastAPI) -> None:
        relations = MongoRelationRows(rt.db)
        knowledge = KnowledgeBase(MongoEntityStore(rt.db), summaries, relations)
        schema = load_schema(settings.schema_path)
        vectors: MovingKnowledge | None = None
        search: KnowledgeSearch | None = None
        passages = MongoPassageRows(rt.db)
        if settings.recall:
            vectors, search, reindexer = await open_recall(settings, knowledge, passages, rt.db)
            reindexers[:] = [reindexer]
        handlers = EnrichmentHandlers(knowledge, schema, vectors, passages)
        rt.consumer.on(
            RECORD_UPSERTED, handlers.on_record_upserted, batch=handlers.on_record_upserted_batch
        )
        rt.consumer.on(PASSAGES_WITHDRAWN, handlers.on_passages_withdrawn)
        rt.consumer.on(
            RECORD_TOMBSTONED,
            handlers.on_record_tombstoned,
            batch=handlers.on_record_tombstoned_batch,
        )
        if vectors is not None:
            rt.consumer.on(
                PASSAGE_UPSERTED,
                handlers.on_passage_upserted,
                batch=handlers.on_passage_upserted_batch,
            )
            for computed in (EMBEDDING_BULK_COMPUTED, EMBEDDING_COMPUTED):
                rt.consumer.on(
                    computed,
                    handlers.on_embedding_computed,
                    batch=handlers.on_embedding_computed_batch,
                )
        deps = EnrichmentDeps(
            knowledge=knowledge,
            resolutions=Resolutions(knowledge, handlers.sections, rt.outbox),
            sections=handlers.sections,
            passages=passages,
            vectors=vectors,
            search=search,
            max_top_k=settings.max_top_k,
            graph=RelationGraph(relations, entities=knowledge, schema=schema),
            reindex=reindexers[0] if reindexers else None,
            schema=schema,
        )
        install(app, deps)

    async def reindex() -> None:
        """Walk a started or resumed reindex (the reindexer `register` built, if recall is on)."""
        if reindexers:
            await reindexers[0].run()

    background = [reindex] + ([closing(summary_client)] if summary_client else [])
    return service_app(
        runtime,
        title="engram-enrichment",
        register=register,
        routers=ROUTERS,
        background=background,
    )
