"""The memory service's composition root."""

from __future__ import annotations

import logging

from fastapi import FastAPI

from engram_embedders import make_embedder
from engram_events.catalog import (
    AGENT_DELETED,
    CONVERSATION_DELETED,
    CONVERSATION_SUBMITTED,
    DOCUMENT_TOMBSTONED,
    EMBEDDING_COMPUTED,
    FACT_WITHDRAWN,
    MEMORY_WRITE_REQUESTED,
    RECORD_TOMBSTONED,
)
from engram_memory import api
from engram_memory.adapters.conversations import ConversationStore
from engram_memory.adapters.dedup import DedupSlots
from engram_memory.adapters.rows import INDEXES, MEMORIES, MemoryRows, keeps_source_index
from engram_memory.adapters.vectors import KEYWORD_INDEXES, MemoryVectors
from engram_memory.config import MemorySettings
from engram_memory.conversations import ConversationHandlers
from engram_memory.dedup import Dedup
from engram_memory.domain.conversations import ModelOptions
from engram_memory.handlers import MemoryHandlers
from engram_memory.recall import Recall
from engram_memory.retention import Retention
from engram_memory.withdrawal import Withdrawals
from engram_platform.app import service_app
from engram_platform.runtime import ConnectedRuntime, Runtime
from engram_vectors import LexicalMismatch, vector_store_from

SERVICE = "memory"
log = logging.getLogger(__name__)


def model_options(settings: MemorySettings) -> ModelOptions | None:
    """The conversation model's options, or None when no model is configured."""
    if settings.llm_model is None or settings.llm_base_url is None:
        return None
    return ModelOptions(
        model=settings.llm_model,
        temperature=settings.llm_temperature,
        candidates=settings.llm_candidates,
    )


def create_app(settings: MemorySettings | None = None, *, install_global: bool = True) -> FastAPI:
    """Consumes memory writes, embeddings and tombstones; serves recall and reads internally."""
    settings = settings or MemorySettings()
    runtime = Runtime.build(
        SERVICE,
        settings,
        install_global=install_global,
        recover_collections=[MEMORIES],
        indexes=INDEXES,
    )

    async def register(rt: ConnectedRuntime, app: FastAPI) -> None:
        embedder = make_embedder(settings.embedder, **settings.embedder_options())
        store = vector_store_from(
            settings.qdrant_url, settings.vector_path, keyword_indexes=KEYWORD_INDEXES
        )
        rows = MemoryRows(rt.db, source_index=await keeps_source_index(rt.db))
        vectors = MemoryVectors(store, settings.collection, lexical=settings.lexical)
        provenance = embedder.provenance
        try:
            held = await vectors.open(provenance.dimension, provenance.fingerprint)
        except LexicalMismatch as refused:
            log.error(
                f"{refused}: remove the collection (or name another with "
                "ENGRAM_MEMORY_COLLECTION) and store the memories again, or set "
                "ENGRAM_MEMORY_LEXICAL to match it",
                extra={"collection": settings.collection},
            )
            raise
        if held != provenance.fingerprint:
            log.warning(
                "collection embedder differs from the configured embedder; recall will refuse",
                extra={"collection": settings.collection},
            )
        withdrawals = Withdrawals(rows, vectors)
        retention = Retention(settings.retention, rows, vectors, withdrawals)
        handlers = MemoryHandlers(
            rows,
            vectors,
            retention,
            withdrawals,
            settings.memory_limits,
            Dedup(DedupSlots(rt.db), rows),
            require_all_sources=settings.withdraw_requires_all_sources,
        )
        rt.consumer.on(
            MEMORY_WRITE_REQUESTED, handlers.on_write_requested, batch=handlers.on_writes_requested
        )
        rt.consumer.on(EMBEDDING_COMPUTED, handlers.on_computed, batch=handlers.on_computed_many)
        rt.consumer.on(
            RECORD_TOMBSTONED, handlers.on_record_tombstoned, batch=handlers.on_records_tombstoned
        )
        rt.consumer.on(
            FACT_WITHDRAWN, handlers.on_fact_withdrawn, batch=handlers.on_facts_withdrawn
        )
        rt.consumer.on(DOCUMENT_TOMBSTONED, handlers.on_document_tombstoned)
        rt.consumer.on(AGENT_DELETED, handlers.on_agent_deleted)
        recall = Recall(
            embedder, vectors, min_score=settings.min_score, fusion=settings.fusion_settings
        )
        conversations = ConversationHandlers(
            ConversationStore(rt.db),
            handlers,
            settings.memory_limits,
            recall=recall,
            model=settings.chat_model(),
            options=model_options(settings),
            max_attempts=settings.max_attempts,
        )
        rt.consumer.on(CONVERSATION_SUBMITTED, conversations.on_submitted)
        rt.consumer.on(CONVERSATION_DELETED, conversations.on_deleted)
        app.state.conversations = conversations.store
        app.state.rows = rows
        app.state.vectors = vectors
        app.state.store = store
        app.state.withdrawals = withdrawals
        app.state.outbox = rt.outbox
        app.state.dedup = handlers.dedup
        app.state.recall = recall

    app = service_app(
        runtime,
        title="engram-memory",
        register=register,
        routers=[api.router],
    )
    return app
