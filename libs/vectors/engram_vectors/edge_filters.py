"""Translate parsed conditions into qdrant-edge filters."""

from __future__ import annotations

from typing import Any

import qdrant_edge as edge

from engram_vectors.filters import Conditions, FieldMatch


def _matches(condition: FieldMatch) -> list[Any]:
    """One field condition per value type, since MatchAny takes only strings or only integers."""
    parts: list[Any] = []
    for values in (condition.strings, condition.integers):
        if len(values) == 1:
            parts.append(edge.FieldCondition(condition.key, match=edge.MatchValue(values[0])))
        elif values:
            parts.append(edge.FieldCondition(condition.key, match=edge.MatchAny(values)))
    return parts


def to_edge_filter(conditions: Conditions) -> edge.Filter | None:
    """All conditions must hold; a condition with mixed value types holds if either part does."""
    if not conditions:
        return None
    must: list[Any] = []
    for condition in conditions:
        parts = _matches(condition)
        must.append(parts[0] if len(parts) == 1 else edge.Filter(should=parts))
    return edge.Filter(must=must)
