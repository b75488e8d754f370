"""Payload filters: a flat mapping of key to condition, all of which must hold.

A key is a payload field, or `parent.child` to reach one level into an object (`metadata.source`);
a child is never looked up inside a list, as in Qdrant. A value is a string, integer or bool (equal,
type-strictly), a float (equal to a stored int or float, as a one-point range, since Qdrant has no
exact float match), a non-empty list of strings and integers (any of them), a Range, or Exists. Dicts
(operators such as `$regex`) are refused: input is always literal. A list payload field matches
when any of its elements does.

`payload_matches` is the numpy adapter's reading of these conditions and agrees with both Qdrant
engines: type-strict equality, numeric ranges over ints and floats only, datetime ranges over
strings Qdrant reads as datetimes (see instants.py), and Exists as Qdrant's `is_empty` negated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias

from engram_vectors.errors import InvalidFilter
from engram_vectors.ids import RESERVED_STRING_PREFIX
from engram_vectors.instants import parse_instant
from engram_vectors.models import Exists, Range

FILTER_KEY_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
NESTED_KEY_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_FILTER_VALUES = 1024


class _Missing:
    """The value of a field a payload does not have (distinct from a stored null)."""


MISSING = _Missing()


def _elements(stored: object) -> list[object]:
    """The values a condition looks at: a list's elements, or the value itself."""
    return stored if isinstance(stored, list) else [stored]


@dataclass(frozen=True)
class FieldMatch:
    """Payload `key` must equal one of `values` (for a list payload: contain one of them)."""

    key: str
    values: tuple[str | int, ...]

    @property
    def strings(self) -> list[str]:
        """The string values, for engines that match strings and integers separately."""
        return [value for value in self.values if isinstance(value, str)]

    @property
    def integers(self) -> list[int]:
        """The integer values, for engines that match strings and integers separately."""
        return [value for value in self.values if not isinstance(value, str)]

    def holds(self, stored: object) -> bool:
        """Type-strict equality, as Qdrant does it: a stored bool or float never equals an int."""
        return any(
            type(item) is type(value) and item == value
            for item in _elements(stored)
            for value in self.values
        )


@dataclass(frozen=True)
class BoolMatch:
    """Payload `key` must be the boolean `value` (for a list payload: contain it)."""

    key: str
    value: bool

    def holds(self, stored: object) -> bool:
        """Only a stored boolean equals a boolean; 1 and 0 do not."""
        return any(type(item) is bool and item is self.value for item in _elements(stored))


@dataclass(frozen=True)
class NumberRange:
    """Payload `key` must be a number (int or float) within the inclusive bounds."""

    key: str
    gte: float | None
    lte: float | None

    def _within(self, item: object) -> bool:
        if not isinstance(item, int | float) or isinstance(item, bool):
            return False
        return (self.gte is None or item >= self.gte) and (self.lte is None or item <= self.lte)

    def holds(self, stored: object) -> bool:
        """Any numeric element within the bounds; strings and booleans never are."""
        return any(self._within(item) for item in _elements(stored))


@dataclass(frozen=True)
class DatetimeRange:
    """Payload `key` must be a datetime string naming an instant within the inclusive bounds."""

    key: str
    gte: datetime | None
    lte: datetime | None

    def _within(self, item: object) -> bool:
        instant = parse_instant(item) if isinstance(item, str) else None
        return (
            instant is not None
            and (self.gte is None or instant >= self.gte)
            and (self.lte is None or instant <= self.lte)
        )

    def holds(self, stored: object) -> bool:
        """Any element that reads as a datetime within the bounds; anything else never is."""
        return any(self._within(item) for item in _elements(stored))


@dataclass(frozen=True)
class FieldExists:
    """Payload `key` must hold a value (present, not null, not []) or, if not `present`, not."""

    key: str
    present: bool

    def holds(self, stored: object) -> bool:
        """Qdrant's `is_empty` (missing, null or an empty list), negated when `present`."""
        empty = stored is MISSING or stored is None or stored == []
        return empty is not self.present


Condition: TypeAlias = FieldMatch | BoolMatch | NumberRange | DatetimeRange | FieldExists
Conditions = tuple[Condition, ...]


def _check_key(key: object) -> str:
    """A plain field name, or `parent.child` with a child of letters, digits, '_' and '-'."""
    if isinstance(key, str):
        parent, dot, child = key.partition(".")
        if FILTER_KEY_PATTERN.fullmatch(parent) and (
            not dot or NESTED_KEY_PATTERN.fullmatch(child)
        ):
            return key
    raise InvalidFilter("filter keys are payload field names, or parent.child for one level")


def _scalar(key: str, value: object) -> str | int:
    """Accept a string or a non-bool integer in a list, refuse anything else by type name only."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidFilter(
            f"filter list values for {key!r} must be strings or integers, "
            f"got {type(value).__name__}"
        )
    if isinstance(value, str) and value.startswith(RESERVED_STRING_PREFIX):
        raise InvalidFilter(f"filter value for {key!r} starts with a reserved prefix")
    return value


def _any_of(key: str, raw: Sequence[object]) -> FieldMatch:
    """A non-empty list of strings and integers, deduplicated."""
    if not raw:
        raise InvalidFilter(f"filter list for {key!r} is empty")
    if len(raw) > MAX_FILTER_VALUES:
        raise InvalidFilter(f"filter list for {key!r} has more than {MAX_FILTER_VALUES} values")
    return FieldMatch(key=key, values=tuple(dict.fromkeys(_scalar(key, item) for item in raw)))


def _number_bound(key: str, bound: object) -> float | None:
    """None or a finite int/float range bound."""
    if bound is None:
        return None
    if isinstance(bound, int | float) and not isinstance(bound, bool) and math.isfinite(bound):
        return bound
    raise InvalidFilter(f"range bounds for {key!r} must be finite numbers or datetimes")


def _datetime_bound(key: str, bound: object) -> datetime | None:
    """None or a timezone-aware datetime range bound."""
    if bound is None:
        return None
    if not isinstance(bound, datetime) or bound.utcoffset() is None:
        raise InvalidFilter(f"datetime range bounds for {key!r} must both be timezone-aware")
    return bound


def _range(key: str, wanted: Range) -> NumberRange | DatetimeRange:
    """At least one bound, both of one kind, the lower no greater than the upper."""
    if wanted.gte is None and wanted.lte is None:
        raise InvalidFilter(f"range for {key!r} needs at least one bound")
    condition: NumberRange | DatetimeRange
    if isinstance(wanted.gte, datetime) or isinstance(wanted.lte, datetime):
        gte_at, lte_at = _datetime_bound(key, wanted.gte), _datetime_bound(key, wanted.lte)
        empty = gte_at is not None and lte_at is not None and gte_at > lte_at
        condition = DatetimeRange(key=key, gte=gte_at, lte=lte_at)
    else:
        gte, lte = _number_bound(key, wanted.gte), _number_bound(key, wanted.lte)
        empty = gte is not None and lte is not None and gte > lte
        condition = NumberRange(key=key, gte=gte, lte=lte)
    if empty:
        raise InvalidFilter(f"range for {key!r} has gte above lte")
    return condition


def _condition(key: str, raw: object) -> Condition:
    """One filter entry as a condition, refusing anything outside the documented forms."""
    if isinstance(raw, Range):
        return _range(key, raw)
    if isinstance(raw, Exists):
        if not isinstance(raw.present, bool):
            raise InvalidFilter(f"Exists for {key!r} takes True or False")
        return FieldExists(key=key, present=raw.present)
    if isinstance(raw, bool):
        return BoolMatch(key=key, value=raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise InvalidFilter(f"filter value for {key!r} must be finite")
        return NumberRange(key=key, gte=raw, lte=raw)
    if isinstance(raw, str | int):
        return FieldMatch(key=key, values=(_scalar(key, raw),))
    if isinstance(raw, Sequence) and not isinstance(raw, bytes):
        return _any_of(key, raw)
    raise InvalidFilter(f"filter value for {key!r} has an unsupported type {type(raw).__name__}")


def parse_filter(raw: Mapping[str, Any] | None) -> Conditions:
    """Validate a caller's filter and turn it into conditions every adapter can translate."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise InvalidFilter(f"filter must be a mapping, got {type(raw).__name__}")
    return tuple(_condition(_check_key(key), value) for key, value in raw.items())


def payload_value(payload: Mapping[str, Any], key: str) -> object:
    """The value a filter key names; MISSING when absent or when `parent` is not an object."""
    parent, dot, child = key.partition(".")
    value = payload.get(parent, MISSING)
    if not dot:
        return value
    return value.get(child, MISSING) if isinstance(value, dict) else MISSING


def payload_matches(payload: Mapping[str, Any], conditions: Conditions) -> bool:
    """Whether a payload satisfies every condition."""
    return all(condition.holds(payload_value(payload, condition.key)) for condition in conditions)
