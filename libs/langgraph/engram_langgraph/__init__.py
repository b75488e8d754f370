"""LangGraph long-term memory over Engram: `EngramStore` implements LangGraph's `BaseStore`."""

from engram_langgraph.errors import MemoryNotStored
from engram_langgraph.store import EngramStore

__all__ = ["EngramStore", "MemoryNotStored"]
