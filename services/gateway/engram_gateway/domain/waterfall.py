"""Pure: a trace's spans as waterfall rows (depth, offset and width as percentages)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Row:
    """One bar of the waterfall."""

    span_id: str
    name: str
    service: str
    kind: str
    status: str
    depth: int
    start_ms: float
    duration_ms: float
    left_pct: float
    width_pct: float
    attributes: list[tuple[str, str]]


def _children(spans: list[dict[str, Any]]) -> dict[str | None, list[dict[str, Any]]]:
    """Spans grouped by parent; a parent outside the trace counts as a root."""
    ids = {s["span_id"] for s in spans}
    grouped: dict[str | None, list[dict[str, Any]]] = {}
    for span in spans:
        parent = span.get("parent_span_id")
        grouped.setdefault(parent if parent in ids else None, []).append(span)
    for siblings in grouped.values():
        siblings.sort(key=lambda s: (s["start"], s["span_id"]))
    return grouped


def waterfall(spans: list[dict[str, Any]]) -> list[Row]:
    """Depth-first rows in start order, scaled to the trace's whole extent."""
    if not spans:
        return []
    t0: datetime = min(s["start"] for s in spans)
    t1: datetime = max(s["end"] for s in spans)
    total_ms = max((t1 - t0).total_seconds() * 1000, 0.001)
    grouped = _children(spans)
    rows: list[Row] = []

    def visit(span: dict[str, Any], depth: int) -> None:
        start_ms = (span["start"] - t0).total_seconds() * 1000
        duration = float(span.get("duration_ms") or 0.0)
        rows.append(
            Row(
                span_id=span["span_id"],
                name=span["name"],
                service=str(span.get("service") or "?"),
                kind=span.get("kind", ""),
                status=span.get("status", "UNSET"),
                depth=depth,
                start_ms=round(start_ms, 3),
                duration_ms=round(duration, 3),
                left_pct=round(start_ms / total_ms * 100, 3),
                width_pct=round(max(duration / total_ms * 100, 0.3), 3),
                attributes=[(str(a["key"]), str(a["value"])) for a in span.get("attributes", [])],
            )
        )
        for child in grouped.get(span["span_id"], []):
            visit(child, depth + 1)

    for root in grouped.get(None, []):
        visit(root, 0)
    return rows


def summary(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """One line per trace for the recent list: root name, services, duration, errors."""
    roots = _children(spans).get(None, [])
    root = roots[0] if roots else min(spans, key=lambda s: s["start"])
    t0 = min(s["start"] for s in spans)
    t1 = max(s["end"] for s in spans)
    return {
        "trace_id": root["trace_id"],
        "name": root["name"],
        "started": t0,
        "duration_ms": round((t1 - t0).total_seconds() * 1000, 1),
        "services": sorted({str(s.get("service") or "?") for s in spans}),
        "span_count": len(spans),
        "errors": sum(1 for s in spans if s.get("status") == "ERROR"),
    }
