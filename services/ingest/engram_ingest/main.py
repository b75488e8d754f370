"""Ingest's composition root."""

from __future__ import annotations

from fastapi import FastAPI

from engram_events.catalog import (
    DOCUMENT_DELETED,
    DOCUMENT_EXTRACTED,
    DOCUMENT_EXTRACTION_FAILED,
    DOCUMENT_SUBMITTED,
)
from engram_ingest import api
from engram_ingest.adapters.store import INDEXES, IngestStore
from engram_ingest.api import IngestDeps
from engram_ingest.config import IngestSettings
from engram_ingest.handlers import IngestHandlers
from engram_ingest.service.deletions import Deletions
from engram_ingest.service.extract_log import ExtractLog
from engram_ingest.service.intake import Intake
from engram_platform.app import service_app
from engram_platform.dependencies import install
from engram_platform.runtime import ConnectedRuntime, Runtime

SERVICE = "ingest"


def create_app(settings: IngestSettings | None = None, *, install_global: bool = True) -> FastAPI:
    """Consumes document submissions and deletions; serves document status internally."""
    settings = settings or IngestSettings()
    runtime = Runtime.build(SERVICE, settings, install_global=install_global, indexes=INDEXES)

    async def register(rt: ConnectedRuntime, app: FastAPI) -> None:
        store = IngestStore(rt.db)
        handlers = IngestHandlers(Intake(store), Deletions(store), ExtractLog(store))
        rt.consumer.on(
            DOCUMENT_SUBMITTED,
            handlers.on_submitted,
            on_dead_letter=handlers.on_submitted_dead_lettered,
        )
        rt.consumer.on(DOCUMENT_DELETED, handlers.on_deleted)
        rt.consumer.on(DOCUMENT_EXTRACTED, handlers.on_extracted)
        rt.consumer.on(DOCUMENT_EXTRACTION_FAILED, handlers.on_extraction_failed)
        install(app, IngestDeps(documents=store))

    return service_app(runtime, title="engram-ingest", register=register, routers=[api.router])
