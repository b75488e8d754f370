"""JSON and NDJSON: objects become candidates, nested values flatten to dotted attributes."""

from __future__ import annotations

import json
from typing import Any

from engram_extraction.domain.candidates import (
    Candidate,
    Extraction,
    ExtractionFailed,
    Limits,
    check_values,
    flatten,
)
from engram_extraction.domain.naming import type_name


def _object(value: Any, locator: str, limits: Limits, type_hint: str | None = None) -> Candidate:
    """One JSON value as a candidate; anything but an object is rejected."""
    if not isinstance(value, dict):
        return Candidate(locator, problem=f"expected an object, found {type(value).__name__}")
    if not value:
        return Candidate(locator, problem="the object is empty")
    return check_values(Candidate(locator, flatten(value), type_hint=type_hint), limits)


def extract_json(text: str, limits: Limits) -> Extraction:
    """An array of objects, an object of arrays of objects (one type per key), or one object."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExtractionFailed(f"invalid JSON at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ExtractionFailed("JSON is nested too deeply") from None
    try:
        return _extract_parsed(data, limits)
    except RecursionError:
        raise ExtractionFailed("JSON is nested too deeply") from None


def _extract_parsed(data: Any, limits: Limits) -> Extraction:
    """Candidates from an already parsed JSON document."""
    if isinstance(data, list):
        return Extraction("json", [_object(v, f"$[{i}]", limits) for i, v in enumerate(data)])
    if not isinstance(data, dict):
        raise ExtractionFailed(f"JSON documents must hold objects, found {type(data).__name__}")
    collections = {
        k: v
        for k, v in data.items()
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)
    }
    if not collections:
        return Extraction("json", [_object(data, "$", limits)])
    candidates = [
        _object(item, f"$.{key}[{i}]", limits, type_hint=type_name(key, singularise=True))
        for key, items in collections.items()
        for i, item in enumerate(items)
    ]
    return Extraction("json", candidates)


def extract_ndjson(text: str, limits: Limits) -> Extraction:
    """One JSON object per line; a line that is not one is a rejected candidate."""
    candidates: list[Candidate] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except RecursionError:
            candidates.append(Candidate(f"line {number}", problem="JSON is nested too deeply"))
            continue
        except json.JSONDecodeError as exc:
            candidates.append(
                Candidate(f"line {number}", problem=f"invalid JSON at column {exc.colno}")
            )
            continue
        try:
            candidates.append(_object(value, f"line {number}", limits))
        except RecursionError:
            candidates.append(Candidate(f"line {number}", problem="JSON is nested too deeply"))
    return Extraction("ndjson", candidates)
