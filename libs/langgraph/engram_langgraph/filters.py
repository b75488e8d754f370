"""LangGraph search filters: what Engram's metadata filter can narrow, and the exact local check.

The server narrows by every condition it can express on a value's top-level scalar fields
(kept as metadata); every result is then checked against the whole filter with LangGraph's
own semantics, so a condition the server cannot express (`$ne`, nested objects, lists) is
still exact, only not pushed down.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

FIELD_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
RESERVED_PREFIX = "lg_"
MAX_FILTER_STRING = 256
_BOUNDS = {"$gte": "gte", "$gt": "gte", "$lte": "lte", "$lt": "lte"}


def metadata_field(name: str) -> bool:
    """Whether a value field is mirrored into metadata (a plain name, not a reserved one)."""
    return bool(FIELD_PATTERN.match(name)) and not name.startswith(RESERVED_PREFIX)


def scalar_fields(value: Mapping[str, Any]) -> dict[str, Any]:
    """The value's top-level scalar fields that metadata can carry and filters can reach."""
    return {
        name: field
        for name, field in value.items()
        if metadata_field(name) and isinstance(field, str | int | float | bool) and _storable(field)
    }


def _storable(field: str | int | float | bool) -> bool:
    """Whether Engram's metadata holds the number as given (finite, within signed 64 bits); a
    number it cannot hold stays in the JSON value and is checked locally, like a nested field."""
    if isinstance(field, float):
        return math.isfinite(field)
    if isinstance(field, int) and not isinstance(field, bool):
        return -(2**63) <= field < 2**63
    return True


def _pushable_scalar(value: Any) -> bool:
    """A scalar Engram compares as LangGraph does: strings within the filter's bound, integers
    and booleans (a float's equality is left to the local check)."""
    if isinstance(value, str):
        return 0 < len(value) <= MAX_FILTER_STRING
    return isinstance(value, int)


def _pushable_number(value: Any) -> bool:
    """A range bound Engram compares numerically (booleans are not numbers here)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _condition(wanted: Any) -> Any | None:
    """Engram's condition for one LangGraph condition, or None when it cannot narrow."""
    if not isinstance(wanted, Mapping):
        return wanted if _pushable_scalar(wanted) else None
    if not wanted or not all(isinstance(op, str) and op.startswith("$") for op in wanted):
        return None
    if "$eq" in wanted and _pushable_scalar(wanted["$eq"]):
        return {"eq": wanted["$eq"]}
    bounds = {
        _BOUNDS[op]: bound
        for op, bound in wanted.items()
        if op in _BOUNDS and _pushable_number(bound)
    }
    return bounds or None


def pushdown(filter: Mapping[str, Any] | None) -> dict[str, Any]:
    """The metadata conditions the server applies: a superset of what the filter keeps."""
    found: dict[str, Any] = {}
    for name, wanted in (filter or {}).items():
        condition = _condition(wanted) if metadata_field(name) else None
        if condition is not None:
            found[name] = condition
    return found


def _operator(value: Any, op: str, operand: Any) -> bool:
    """One `$` operator as LangGraph's in-memory store applies it."""
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if value is None:
        return False
    try:
        have, bound = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    if op == "$gt":
        return have > bound
    if op == "$gte":
        return have >= bound
    if op == "$lt":
        return have < bound
    if op == "$lte":
        return have <= bound
    raise ValueError(f"unsupported filter operator: {op}")


def _holds(value: Any, wanted: Any) -> bool:
    """Whether a stored value meets one condition (nested objects compared field by field)."""
    if isinstance(wanted, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        if not isinstance(value, Mapping):
            return False
        return all(_holds(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_holds(v, w) for v, w in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def keeps(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether an item's value meets every condition of a LangGraph filter."""
    return all(_holds(value.get(name), wanted) for name, wanted in (filter or {}).items())
