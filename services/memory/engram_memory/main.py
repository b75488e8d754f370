"""The memory service's composition root."""

from __future__ import annotations

from fastapi import FastAPI

from engram_embedders import Embedder, Provenance
from engram_embedders.moving import ReindexDocument
from engram_events.catalog import (
    AGENT_DELETED,
    CONVERSATION_DELETED,
    CONVERSATION_SUBMITTED,
    DOCUMENT_TOMBSTONED,
    EMBEDDING_BULK_COMPUTED,
    EMBEDDING_COMPUTED,
    FACT_WITHDRAWN,
    MEMORY_BULK_WRITE_REQUESTED,
    MEMORY_WRITE_REQUESTED,
    RECORD_TOMBSTONED,
)
from engram_memory import api
from engram_memory.adapters.conversations import ConversationStore
from engram_memory.adapters.dedup import DedupSlots
from engram_memory.adapters.reindex import REINDEX, STORE, ReindexStore
from engram_memory.adapters.retention import RetentionRules
from engram_memory.adapters.rows import INDEXES, MEMORIES, MemoryRows
from engram_memory.adapters.staging import OutboxWithdrawals
from engram_memory.adapters.vectors import KEYWORD_INDEXES, MemoryVectors
from engram_memory.api import MemoryDeps
from engram_memory.api.lean import LEAN_ROUTES
from engram_memory.config import MemorySettings
from engram_memory.domain.conversations import ModelOptions
from engram_memory.handlers import ConversationHandlers, MemoryHandlers
from engram_memory.service.cascades import Cascades
from engram_memory.service.conversations import ConversationIntake
from engram_memory.service.dedup import Dedup
from engram_memory.service.deletion import Deletions
from engram_memory.service.expiry import ExpirySweeper
from engram_memory.service.exported_vectors import ExportedVectors
from engram_memory.service.history import History
from engram_memory.service.inline import InlineEmbedding
from engram_memory.service.moving import Embedded, MovingVectors
from engram_memory.service.recall import Recall
from engram_memory.service.reindex import MemoryReindexer
from engram_memory.service.retention import Retention
from engram_memory.service.storing import Storing
from engram_memory.service.withdrawal import Withdrawals
from engram_memory.service.writes import Writes
from engram_platform.app import service_app
from engram_platform.audit import INDEXES as AUDIT_INDEXES
from engram_platform.audit import AuditLog
from engram_platform.capabilities import server_capabilities
from engram_platform.dependencies import install
from engram_platform.indexes import merge
from engram_platform.runtime import ConnectedRuntime, Runtime
from engram_vectors import vector_store_from
from engram_vectors.opening import held_fingerprint, open_at_start
from engram_vectors.port import VectorStore

SERVICE = "memory"


def model_options(settings: MemorySettings) -> ModelOptions | None:
    """The conversation model's options, or None when no model is configured."""
    if settings.llm_model is None or settings.llm_base_url is None:
        return None
    return ModelOptions(
        model=settings.llm_model,
        temperature=settings.llm_temperature,
        candidates=settings.llm_candidates,
    )


def memory_store(settings: MemorySettings) -> VectorStore:
    """The vector store the memory collections live in (embedded, or a Qdrant server)."""
    return vector_store_from(
        settings.qdrant_url,
        settings.vector_path,
        api_key=settings.qdrant_api_key,
        keyword_indexes=KEYWORD_INDEXES,
    )


async def open_vectors(
    settings: MemorySettings,
    provenance: Provenance,
    store: VectorStore | None = None,
    collection: str | None = None,
) -> MemoryVectors:
    """A memory collection (the configured one by default) for an embedder, created if new; a
    collection built with another lexical encoder stops start-up, one of another embedder is only
    warned of."""
    store = store or memory_store(settings)
    name = collection or settings.collection
    vectors = MemoryVectors(store, name, lexical=settings.lexical)
    await open_at_start(
        vectors.open,
        provenance.dimension,
        provenance.fingerprint,
        collection=name,
        remedy="remove the collection (or name another with ENGRAM_MEMORY_COLLECTION) and store "
        "the memories again, or set ENGRAM_MEMORY_LEXICAL to match it",
        reader="recall",
    )
    return vectors


def create_app(settings: MemorySettings | None = None, *, install_global: bool = True) -> FastAPI:
    """Consumes memory writes, embeddings and tombstones; serves recall and reads internally."""
    settings = settings or MemorySettings()
    runtime = Runtime.build(
        SERVICE,
        settings,
        install_global=install_global,
        recover_collections=[MEMORIES],
        indexes=merge(INDEXES, AUDIT_INDEXES),
    )

    sweepers: list[ExpirySweeper] = []
    reindexers: list[MemoryReindexer] = []

    async def register(rt: ConnectedRuntime, app: FastAPI) -> None:
        records = ReindexDocument(rt.db, REINDEX, STORE)
        moved_to, job = await records.load()
        active = moved_to or settings.embedder_space(settings.collection)
        store = memory_store(settings)
        held = await held_fingerprint(store, active.collection)
        embedder, adopted = await settings.embedder_holding(active, held)
        capabilities = await server_capabilities(rt.db)
        rows = MemoryRows(rt.db, source_index=not capabilities.multikey_indexes)
        opened = await open_vectors(settings, embedder.provenance, store, active.collection)

        async def open_target(name: str, target: Embedder) -> MemoryVectors:
            return await open_vectors(settings, target.provenance, opened.store, name)

        reembeds = moved_to is not None or adopted
        vectors = MovingVectors(Embedded(embedder, opened), reembeds=reembeds)
        reindexer = MemoryReindexer(
            records,
            ReindexStore(rt.db),
            vectors,
            active=active,
            open_vectors=open_target,
            base_collection=settings.collection,
            **settings.reindex_options(),
        )
        if job is not None:
            await reindexer.resume(job)
        reindexers[:] = [reindexer]
        withdrawals = Withdrawals(rows, vectors)
        rules = RetentionRules(rt.db)
        retention = Retention(settings.retention, rows, withdrawals, rules)
        require_all = settings.withdraw_requires_all_sources
        cascades = Cascades(rows, withdrawals, rules, require_all_sources=require_all)
        dedup = Dedup(DedupSlots(rt.db), rows)
        writes = Writes(
            rows,
            dedup,
            settings.memory_limits,
            require_all_sources=require_all,
            fingerprint=lambda: vectors.active.fingerprint,
        )
        storing = Storing(rows, vectors, retention)
        inline = (
            InlineEmbedding(writes, storing, lambda: vectors.active.embedder)
            if settings.embed_single_writes
            else None
        )
        handlers = MemoryHandlers(writes, storing, cascades, inline)
        rt.consumer.on(
            MEMORY_WRITE_REQUESTED,
            handlers.on_single_write,
            batch=handlers.on_single_writes,
            on_dead_letter=handlers.on_write_dead_lettered,
        )
        rt.consumer.on(
            MEMORY_BULK_WRITE_REQUESTED,
            handlers.on_write_requested,
            batch=handlers.on_writes_requested,
            on_dead_letter=handlers.on_write_dead_lettered,
        )
        for computed in (EMBEDDING_COMPUTED, EMBEDDING_BULK_COMPUTED):
            rt.consumer.on(
                computed,
                handlers.on_computed,
                batch=handlers.on_computed_many,
                on_dead_letter=handlers.on_computed_dead_lettered,
            )
        rt.consumer.on(
            RECORD_TOMBSTONED, handlers.on_record_tombstoned, batch=handlers.on_records_tombstoned
        )
        rt.consumer.on(
            FACT_WITHDRAWN, handlers.on_fact_withdrawn, batch=handlers.on_facts_withdrawn
        )
        rt.consumer.on(DOCUMENT_TOMBSTONED, handlers.on_document_tombstoned)
        rt.consumer.on(AGENT_DELETED, handlers.on_agent_deleted)
        recall = Recall(
            embedder,
            vectors,
            min_score=settings.min_score,
            fusion=settings.fusion_settings,
            space=vectors.space,
        )
        conversation_store = ConversationStore(rt.db)
        conversations = ConversationHandlers(
            ConversationIntake(
                conversation_store,
                cascades,
                settings.memory_limits,
                recall=recall,
                model=settings.chat_model(),
                options=model_options(settings),
                max_attempts=settings.max_attempts,
            )
        )
        rt.consumer.on(
            CONVERSATION_SUBMITTED,
            conversations.on_submitted,
            on_dead_letter=conversations.on_submitted_dead_lettered,
        )
        rt.consumer.on(CONVERSATION_DELETED, conversations.on_deleted)
        staged = OutboxWithdrawals(rt.db, rt.outbox)
        deletions = Deletions(rows, vectors, staged)
        audit = AuditLog(rt.db)
        sweepers[:] = [ExpirySweeper(rows, vectors, staged, audit)]
        install(
            app,
            MemoryDeps(
                rows,
                conversation_store,
                recall,
                dedup,
                deletions,
                History(rows),
                retention,
                audit,
                reindexer,
                ExportedVectors(vectors),
            ),
        )

    async def sweep_expired() -> None:
        """Expire lapsed memories periodically (the sweeper `register` built)."""
        await sweepers[0].run(settings.expiry_sweep_seconds)

    async def reindex() -> None:
        """Walk a started or resumed reindex (the reindexer `register` built)."""
        await reindexers[0].run()

    app = service_app(
        runtime,
        title="engram-memory",
        register=register,
        background=[sweep_expired, reindex],
        routers=[api.router],
        lean_routes=LEAN_ROUTES,
    )
    return app
