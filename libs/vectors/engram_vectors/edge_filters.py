"""Translate parsed conditions into qdrant-edge filters."""

from __future__ import annotations

from typing import Any

import qdrant_edge as edge

from engram_vectors.edge_payload import bool_token
from engram_vectors.filters import (
    BoolMatch,
    Condition,
    Conditions,
    DatetimeRange,
    FieldMatch,
    NumberRange,
)


def _matches(condition: FieldMatch) -> Any:
    """One field condition per value type, since MatchAny takes only strings or only integers."""
    parts: list[Any] = []
    for values in (condition.strings, condition.integers):
        if len(values) == 1:
            parts.append(edge.FieldCondition(condition.key, match=edge.MatchValue(values[0])))
        elif values:
            parts.append(edge.FieldCondition(condition.key, match=edge.MatchAny(values)))
    return parts[0] if len(parts) == 1 else edge.Filter(should=parts)


def _condition(condition: Condition) -> Any:
    """The engine condition for one parsed condition."""
    if isinstance(condition, FieldMatch):
        return _matches(condition)
    if isinstance(condition, BoolMatch):
        return edge.FieldCondition(
            condition.key, match=edge.MatchValue(bool_token(condition.value))
        )
    if isinstance(condition, NumberRange):
        bounds = edge.RangeFloat(gte=condition.gte, lte=condition.lte)
        return edge.FieldCondition(condition.key, range=bounds)
    if isinstance(condition, DatetimeRange):
        instants = edge.RangeDateTime(
            gte=None if condition.gte is None else condition.gte.isoformat(),
            lte=None if condition.lte is None else condition.lte.isoformat(),
        )
        return edge.FieldCondition(condition.key, range=instants)
    empty = edge.IsEmptyCondition(condition.key)
    return edge.Filter(must_not=[empty]) if condition.present else empty


def to_edge_filter(conditions: Conditions) -> edge.Filter | None:
    """All conditions must hold."""
    if not conditions:
        return None
    return edge.Filter(must=[_condition(condition) for condition in conditions])
