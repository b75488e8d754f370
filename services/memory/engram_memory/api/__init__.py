"""The memory service's internal HTTP API, called by the gateway with the caller's tenant."""

from engram_memory.api.dependencies import MemoryDeps
from engram_memory.api.routes import router

__all__ = ["MemoryDeps", "router"]
