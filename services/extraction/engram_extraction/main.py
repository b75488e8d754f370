"""Extraction's composition root."""

from __future__ import annotations

import logging

from fastapi import FastAPI

from engram_events.catalog import (
    DOCUMENT_INGESTED,
    DOCUMENT_TOMBSTONED,
    FACT_EDIT_REQUESTED,
    PRUNE_REQUESTED,
    RECORDS_IMPORT_REQUESTED,
    RECORDS_RESTORE_REQUESTED,
)
from engram_extraction import api
from engram_extraction.adapters.passages import INDEXES as PASSAGE_INDEXES
from engram_extraction.adapters.passages import PassageStore
from engram_extraction.adapters.store import INDEXES, RecordStore
from engram_extraction.adapters.tombstones import TombstoneStore
from engram_extraction.adapters.types import INDEXES as TYPE_INDEXES
from engram_extraction.adapters.types import TypeStore
from engram_extraction.api import ExtractionDeps
from engram_extraction.config import ExtractionSettings
from engram_extraction.domain.candidates import Limits
from engram_extraction.domain.llm import LlmOptions
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.handlers import ExtractionHandlers
from engram_extraction.service.documents import DocumentExtraction
from engram_extraction.service.edits import HumanEdits
from engram_extraction.service.imports import RecordImports
from engram_extraction.service.passages import PassageWriter
from engram_extraction.service.restores import RecordRestores
from engram_extraction.service.tombstones import Tombstoning
from engram_extraction.service.types import RecordTypes
from engram_platform.app import service_app
from engram_platform.chat import ChatModel
from engram_platform.dependencies import install
from engram_platform.indexes import merge
from engram_platform.runtime import ConnectedRuntime, Runtime

SERVICE = "extraction"
log = logging.getLogger(__name__)


def llm_parts(settings: ExtractionSettings) -> tuple[ChatModel | None, LlmOptions | None]:
    """The optional LLM extractor's endpoint and options, or (None, None) when it is off."""
    endpoint = settings.chat_model()
    if endpoint is None or settings.llm_model is None:
        return None, None
    options = LlmOptions(
        model=settings.llm_model,
        max_input_chars=settings.llm_max_input_chars,
        temperature=settings.llm_temperature,
    )
    return endpoint, options


def create_app(
    settings: ExtractionSettings | None = None, *, install_global: bool = True
) -> FastAPI:
    """Consumes ingested documents and import requests; serves records internally."""
    settings = settings or ExtractionSettings()
    runtime = Runtime.build(
        SERVICE,
        settings,
        install_global=install_global,
        indexes=merge(INDEXES, PASSAGE_INDEXES, TYPE_INDEXES),
    )

    async def register(rt: ConnectedRuntime, app: FastAPI) -> None:
        store = RecordStore(rt.db, batch=settings.write_batch)
        passages = PassageStore(rt.db)
        types = RecordTypes(TypeStore(rt.db), SchemaRegistry.load(settings.schema_path))
        limits = Limits(settings.max_columns, settings.max_records, settings.max_value_chars)
        model, model_options = llm_parts(settings)
        handlers = ExtractionHandlers(
            DocumentExtraction(
                store,
                types,
                rt.outbox,
                passages=passages,
                limits=limits,
                max_attempts=settings.max_attempts,
                model=model,
                model_options=model_options,
            ),
            RecordImports(
                store, types, rt.outbox, limits=limits, max_attempts=settings.max_attempts
            ),
            Tombstoning(TombstoneStore(store), rt.outbox),
            PassageWriter(passages),
            HumanEdits(store, rt.outbox),
            RecordRestores(store, types, rt.outbox),
        )
        rt.consumer.on(
            DOCUMENT_INGESTED,
            handlers.on_ingested,
            on_dead_letter=handlers.on_ingested_dead_lettered,
        )
        rt.consumer.on(
            RECORDS_IMPORT_REQUESTED,
            handlers.on_import_requested,
            on_dead_letter=handlers.on_import_dead_lettered,
        )
        rt.consumer.on(FACT_EDIT_REQUESTED, handlers.on_fact_edit_requested)
        rt.consumer.on(RECORDS_RESTORE_REQUESTED, handlers.on_restore_requested)
        rt.consumer.on(PRUNE_REQUESTED, handlers.on_prune_requested)
        rt.consumer.on(DOCUMENT_TOMBSTONED, handlers.on_document_tombstoned)
        install(app, ExtractionDeps(records=store, passages=passages, types=types))

    app = service_app(
        runtime,
        title="engram-extraction",
        register=register,
        routers=[api.router, api.passages_router, api.types_router],
    )
    return app
