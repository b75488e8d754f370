"""Extraction's internal HTTP API, called by the gateway with the caller's tenant."""

from engram_extraction.api.dependencies import ExtractionDeps
from engram_extraction.api.passages import router as passages_router
from engram_extraction.api.routes import router
from engram_extraction.api.types import router as types_router

__all__ = ["ExtractionDeps", "passages_router", "router", "types_router"]
