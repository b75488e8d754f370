"""Spans as the local telemetry store holds them, unpacked from their per-trace rows."""

from __future__ import annotations

from typing import Any

from engram_platform.tracing import unpack_spans


def stored_spans(collection: Any, **match: Any) -> list[dict[str, Any]]:
    """Every stored span whose fields equal `match` (all spans when nothing is given)."""
    query = {"trace_id": match["trace_id"]} if "trace_id" in match else {}
    spans = [span for row in collection.find(query) for span in unpack_spans(row)]
    return [s for s in spans if all(s.get(k) == v for k, v in match.items())]


def first_span(collection: Any, **match: Any) -> dict[str, Any] | None:
    """One stored span matching `match`, or None."""
    found = stored_spans(collection, **match)
    return found[0] if found else None
