"""Translate parsed conditions into qdrant-client filters."""

from __future__ import annotations

from qdrant_client.http import models

from engram_vectors.filters import Conditions, FieldMatch


def _matches(condition: FieldMatch) -> list[models.FieldCondition]:
    """One field condition per value type, since MatchAny takes only strings or only integers."""
    parts: list[models.FieldCondition] = []
    for values in (condition.strings, condition.integers):
        if len(values) == 1:
            match: models.MatchValue | models.MatchAny = models.MatchValue(value=values[0])
            parts.append(models.FieldCondition(key=condition.key, match=match))
        elif values:
            parts.append(
                models.FieldCondition(key=condition.key, match=models.MatchAny(any=list(values)))
            )
    return parts


def to_client_filter(conditions: Conditions) -> models.Filter | None:
    """All conditions must hold; a condition with mixed value types holds if either part does."""
    if not conditions:
        return None
    must: list[models.Condition] = []
    for condition in conditions:
        parts = _matches(condition)
        must.append(parts[0] if len(parts) == 1 else models.Filter(should=list(parts)))
    return models.Filter(must=must)
