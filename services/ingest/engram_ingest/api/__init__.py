"""Ingest's internal HTTP API, called by the gateway with the caller's tenant."""

from engram_ingest.api.dependencies import IngestDeps
from engram_ingest.api.routes import router

__all__ = ["IngestDeps", "router"]
