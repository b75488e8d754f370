"""Translate parsed conditions into qdrant-client filters."""

from __future__ import annotations

from qdrant_client.http import models

from engram_vectors.filters import (
    BoolMatch,
    Condition,
    Conditions,
    DatetimeRange,
    FieldMatch,
    NumberRange,
)


def _matches(condition: FieldMatch) -> models.Condition:
    """One field condition per value type, since MatchAny takes only strings or only integers."""
    parts: list[models.Condition] = []
    for values in (condition.strings, condition.integers):
        if len(values) == 1:
            match: models.MatchValue | models.MatchAny = models.MatchValue(value=values[0])
            parts.append(models.FieldCondition(key=condition.key, match=match))
        elif values:
            parts.append(
                models.FieldCondition(key=condition.key, match=models.MatchAny(any=list(values)))
            )
    return parts[0] if len(parts) == 1 else models.Filter(should=parts)


def _condition(condition: Condition) -> models.Condition:
    """The client model for one parsed condition."""
    if isinstance(condition, FieldMatch):
        return _matches(condition)
    if isinstance(condition, BoolMatch):
        return models.FieldCondition(
            key=condition.key, match=models.MatchValue(value=condition.value)
        )
    if isinstance(condition, NumberRange):
        bounds = models.Range(gte=condition.gte, lte=condition.lte)
        return models.FieldCondition(key=condition.key, range=bounds)
    if isinstance(condition, DatetimeRange):
        instants = models.DatetimeRange(gte=condition.gte, lte=condition.lte)
        return models.FieldCondition(key=condition.key, range=instants)
    empty = models.IsEmptyCondition(is_empty=models.PayloadField(key=condition.key))
    return models.Filter(must_not=[empty]) if condition.present else empty


def to_client_filter(conditions: Conditions) -> models.Filter | None:
    """All conditions must hold."""
    if not conditions:
        return None
    return models.Filter(must=[_condition(condition) for condition in conditions])
