"""Enrichment's composition root."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
from fastapi import FastAPI

from engram_embedders import make_embedder
from engram_enrichment.adapters.chat import ChatCompletionsSummariser
from engram_enrichment.adapters.passages import INDEXES as PASSAGE_INDEXES
from engram_enrichment.adapters.passages import MongoPassageRows
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
from engram_vectors.opening import open_at_start


async def open_recall(
    settings: EnrichmentSettings, knowledge: KnowledgeBase, passages: MongoPassageRows
) -> tuple[KnowledgeVectors, KnowledgeSearch]:
    """The knowledge collection and the search over it with the query embedder; search refuses
    a foreign vector space, start-up a collection of an unknown lexical encoder (an earlier one
    is adopted; said in the log: exception messages are left out of it)."""
    embedder = make_embedder(settings.embedder, **settings.embedder_options())
    vectors = KnowledgeVectors(
        vector_store_from(
            settings.qdrant_url,
            settings.vector_path,
            api_key=settings.qdrant_api_key,
            keyword_indexes=KEYWORD_INDEXES,
        ),
        settings.collection,
        lexical=settings.lexical,
    )
    provenance = embedder.provenance
    await open_at_start(
        vectors.open,
        provenance.dimension,
        provenance.fingerprint,
        collection=settings.collection,
        remedy="remove the collection (or name another with ENGRAM_ENRICHMENT_COLLECTION) and "
        "rebuild the knowledge from the records (facts and sections are embedded when they "
        "change), or set ENGRAM_ENRICHMENT_LEXICAL to match",
        reader="search",
    )
    search = KnowledgeSearch(
        embedder, vectors, knowledge, min_score=settings.min_score, passages=passages
    )
    return vectors, search


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

    async def register(rt: ConnectedRuntime, app: FastAPI) -> None:
        relations = MongoRelationRows(rt.db)
        knowledge = KnowledgeBase(MongoEntityStore(rt.db), summaries, relations)
        schema = load_schema(settings.schema_path)
        vectors: KnowledgeVectors | None = None
        search: KnowledgeSearch | None = None
        passages = MongoPassageRows(rt.db)
        if settings.recall:
            vectors, search = await open_recall(settings, knowledge, passages)
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
            graph=RelationGraph(relations),
        )
        install(app, deps)

    return service_app(
        runtime,
        title="engram-enrichment",
        register=register,
        routers=ROUTERS,
        background=[closing(summary_client)] if summary_client else [],
    )
