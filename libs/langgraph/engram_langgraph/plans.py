"""What each operation asks Engram, decided once for the sync and the async store alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import InvalidNamespaceError, ListNamespacesOp, SearchOp

from engram_langgraph import filters, items, namespaces

MAX_CONDITIONS = 20
MAX_TOP_K = 100


@dataclass(frozen=True)
class Settings:
    """How the store maps items onto memories and how long a put waits to be readable."""

    agents: Mapping[str, str] = field(default_factory=dict)
    index_fields: Sequence[str] | None = None
    memory_type: str = "langgraph"
    wait_timeout: float = 30.0
    wait_interval: float = 0.05
    min_score: float | None = -1.0
    page_size: int = 100
    max_content_chars: int = 8000


@dataclass(frozen=True)
class Search:
    """A search as Engram sees it: the agent (None: all of the caller's), the server-side
    filter, and, with a query, how many hits to ask recall for."""

    agent_id: str | None
    filter: dict[str, Any]
    query: str | None
    top_k: int


def _metadata(prefix: tuple[str, ...], filter: Mapping[str, Any] | None) -> dict[str, Any]:
    """Store items under the prefix, narrowed by as many filter conditions as the API takes."""
    found: dict[str, Any] = {items.KEY: {"exists": True}, **namespaces.prefix_conditions(prefix)}
    for name, condition in filters.pushdown(filter).items():
        if len(found) >= MAX_CONDITIONS:
            break
        found.setdefault(name, condition)
    return found


def search(op: SearchOp, settings: Settings) -> Search | None:
    """The plan for a search, or None when nothing can live under the prefix."""
    prefix = tuple(op.namespace_prefix)
    scope: dict[str, Any] = {}
    agent_id: str | None = None
    if prefix:
        try:
            found = namespaces.scope_of(prefix, settings.agents)
        except InvalidNamespaceError:
            return None
        agent_id, scope = found.agent_id, found.filter()
    elif op.query:
        raise ValueError("a search with a query needs a namespace prefix naming the agent")
    top_k = MAX_TOP_K if op.filter else min(MAX_TOP_K, op.offset + op.limit)
    return Search(agent_id, {**scope, "metadata": _metadata(prefix, op.filter)}, op.query, top_k)


def namespace_listing(op: ListNamespacesOp) -> dict[str, Any]:
    """The listing filter for list_namespaces: store items, concrete prefix labels pushed."""
    prefixes = [c.path for c in op.match_conditions or () if c.match_type == "prefix"]
    metadata: dict[str, Any] = {items.KEY: {"exists": True}}
    for path in prefixes:
        metadata.update(namespaces.prefix_conditions(tuple(path)))
    return {"metadata": metadata}
