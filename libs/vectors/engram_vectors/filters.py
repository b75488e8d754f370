"""Payload filters: a flat mapping of key to value or list of values, all of which must match.

Values are strings or integers. Booleans are refused because qdrant-edge-py 0.9 turns a Python
bool into an integer and so never matches a stored boolean; floats are refused because Qdrant has
no exact float match. Dicts (operators such as `$regex`) are refused: input is always literal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engram_vectors.errors import InvalidFilter
from engram_vectors.models import FilterScalar

FILTER_KEY_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
MAX_FILTER_VALUES = 1024


@dataclass(frozen=True)
class FieldMatch:
    """Payload `key` must equal one of `values` (for a list payload: contain one of them)."""

    key: str
    values: tuple[FilterScalar, ...]

    @property
    def strings(self) -> list[str]:
        """The string values, for engines that match strings and integers separately."""
        return [value for value in self.values if isinstance(value, str)]

    @property
    def integers(self) -> list[int]:
        """The integer values, for engines that match strings and integers separately."""
        return [value for value in self.values if not isinstance(value, str)]


Conditions = tuple[FieldMatch, ...]


def _scalar(key: str, value: object) -> FilterScalar:
    """Accept a string or a non-bool integer, refuse anything else by type name only."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidFilter(
            f"filter value for {key!r} must be a string or an integer, got {type(value).__name__}"
        )
    return value


def _values(key: str, raw: object) -> tuple[FilterScalar, ...]:
    """One scalar, or a non-empty list/tuple of scalars, as a deduplicated tuple."""
    if isinstance(raw, str | int) and not isinstance(raw, bool):
        return (raw,)
    if isinstance(raw, Sequence) and not isinstance(raw, str | bytes):
        if not raw:
            raise InvalidFilter(f"filter list for {key!r} is empty")
        if len(raw) > MAX_FILTER_VALUES:
            raise InvalidFilter(f"filter list for {key!r} has more than {MAX_FILTER_VALUES} values")
        return tuple(dict.fromkeys(_scalar(key, item) for item in raw))
    return (_scalar(key, raw),)


def parse_filter(raw: Mapping[str, Any] | None) -> Conditions:
    """Validate a caller's filter and turn it into conditions every adapter can translate."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise InvalidFilter(f"filter must be a mapping, got {type(raw).__name__}")
    conditions = []
    for key, value in raw.items():
        if not isinstance(key, str) or not FILTER_KEY_PATTERN.match(key):
            raise InvalidFilter("filter keys must be plain payload field names")
        conditions.append(FieldMatch(key=key, values=_values(key, value)))
    return tuple(conditions)


def _value_matches(stored: object, wanted: tuple[FilterScalar, ...]) -> bool:
    """Type-strict equality as Qdrant does it: a stored bool or float never equals an integer."""
    if isinstance(stored, bool) or not isinstance(stored, str | int):
        return False
    return any(type(stored) is type(value) and stored == value for value in wanted)


def payload_matches(payload: Mapping[str, Any], conditions: Conditions) -> bool:
    """Whether a payload satisfies every condition; a list field matches if any element does."""
    for condition in conditions:
        stored = payload.get(condition.key)
        items = stored if isinstance(stored, list) else [stored]
        if not any(_value_matches(item, condition.values) for item in items):
            return False
    return True
