"""The embedding service's composition root."""

from __future__ import annotations

from fastapi import FastAPI

from engram_embedders import make_embedder
from engram_embedding.config import EmbeddingSettings
from engram_embedding.handlers import EmbeddingHandlers
from engram_embedding.service.requests import EmbeddingRequests
from engram_events.catalog import EMBEDDING_BULK_REQUESTED, EMBEDDING_REQUESTED
from engram_platform.app import service_app
from engram_platform.consuming import Pipelined
from engram_platform.metrics import PipelineMetrics
from engram_platform.runtime import ConnectedRuntime, Runtime

SERVICE = "embedding"
READ_AHEAD_BATCHES = 16
"""Embedder batches fetched at once and queued for the model together (`prepare`)."""
PUBLISH_EVERY_BATCHES = 1
"""Answers leave after every embedder batch, so memory's work (on the same two cores) comes as a
stream and does not crowd the model's core in bursts."""


def embedding_requests(settings: EmbeddingSettings, metrics: PipelineMetrics) -> EmbeddingRequests:
    """The use case over the configured embedder, with the bulk lane's own model process when
    there is one (no model starts until its first call)."""
    bulk_options = settings.bulk_embedder_options()
    return EmbeddingRequests(
        make_embedder(settings.embedder, **settings.embedder_options()),
        settings.batch_size,
        metrics,
        bulk_call_chars=settings.bulk_call_chars,
        bulk_embedder=make_embedder(settings.embedder, **bulk_options) if bulk_options else None,
    )


def create_app(
    settings: EmbeddingSettings | None = None, *, install_global: bool = True
) -> FastAPI:
    """Consumes `embedding.requested` and publishes `embedding.computed`; no durable data."""
    settings = settings or EmbeddingSettings()
    runtime = Runtime.build(
        SERVICE,
        settings,
        install_global=install_global,
        delivery=Pipelined(every=PUBLISH_EVERY_BATCHES * settings.batch_size),
        batch_size=max(READ_AHEAD_BATCHES * settings.batch_size, settings.consumer_batch_size),
    )

    async def register(rt: ConnectedRuntime, app: FastAPI) -> None:
        requests = embedding_requests(settings, PipelineMetrics(SERVICE, rt.meter_provider))
        handlers = EmbeddingHandlers(requests)
        for requested in (EMBEDDING_REQUESTED, EMBEDDING_BULK_REQUESTED):
            rt.consumer.on(
                requested,
                handlers.on_requested,
                batch=handlers.on_requested_many,
                ahead=handlers.prepare,
            )

    return service_app(runtime, title="engram-embedding", register=register)
