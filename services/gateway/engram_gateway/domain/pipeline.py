"""Pure: metric points summed into per-service figures, laid out as an SVG pipeline picture."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engram_platform.metrics import DEAD_LETTERED, FAILED, HANDLER_DURATION, LAG, PROCESSED

LAYOUT: dict[str, tuple[int, int]] = {
    "connectors": (20, 20),
    "gateway": (20, 150),
    "ingest": (230, 85),
    "extraction": (440, 85),
    "enrichment": (650, 20),
    "embedding": (650, 150),
    "memory": (860, 85),
}
"""Each service's box (x, y) in the picture, in the order documents flow."""
BOX_WIDTH, BOX_HEIGHT = 170, 90
HTTP_DURATION = "http.server.request.duration"

EDGES: tuple[tuple[str, str], ...] = (
    ("connectors", "ingest"),
    ("gateway", "ingest"),
    ("ingest", "extraction"),
    ("extraction", "enrichment"),
    ("enrichment", "embedding"),
    ("embedding", "memory"),
)


@dataclass
class ServiceFigures:
    """What one box shows over the window."""

    name: str
    processed: int = 0
    applied: int = 0
    failed: int = 0
    dead_lettered: int = 0
    lag: int | None = None
    handler_count: int = 0
    handler_seconds: float = 0.0
    lag_by_topic: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    server_errors: int = 0

    @property
    def mean_ms(self) -> float | None:
        return self.handler_seconds / self.handler_count * 1000 if self.handler_count else None

    def per_minute(self, window_seconds: float) -> float:
        return round(self.processed / window_seconds * 60, 1) if window_seconds > 0 else 0.0


def _service(point: dict[str, Any]) -> str:
    name = str(point.get("labels", {}).get("service") or point.get("service") or "?")
    return name.removeprefix("engram-")


def summarize(points: Iterable[dict[str, Any]]) -> dict[str, ServiceFigures]:
    """Delta counters summed; lag is the latest reading per (service, topic)."""
    figures: dict[str, ServiceFigures] = {}
    lag_seen: dict[tuple[str, str], Any] = {}
    for point in points:
        svc = _service(point)
        fig = figures.setdefault(svc, ServiceFigures(svc))
        labels = point.get("labels", {})
        name = point.get("name")
        if name == PROCESSED:
            fig.processed += int(point.get("value") or 0)
            if labels.get("outcome") == "applied":
                fig.applied += int(point.get("value") or 0)
        elif name == FAILED:
            fig.failed += int(point.get("value") or 0)
        elif name == DEAD_LETTERED:
            fig.dead_lettered += int(point.get("value") or 0)
        elif name == HANDLER_DURATION:
            fig.handler_count += int(point.get("count") or 0)
            fig.handler_seconds += float(point.get("sum") or 0.0)
        elif name == HTTP_DURATION:
            fig.requests += int(point.get("count") or 0)
            if str(labels.get("http_response_status_code", "")).startswith("5"):
                fig.server_errors += int(point.get("count") or 0)
        elif name == LAG:
            key = (svc, str(labels.get("topic")))
            if key not in lag_seen or point["time"] >= lag_seen[key]:
                lag_seen[key] = point["time"]
                fig.lag_by_topic[key[1]] = int(point.get("value") or 0)
    for fig in figures.values():
        if fig.lag_by_topic:
            fig.lag = sum(fig.lag_by_topic.values())
    return figures


def picture(figures: dict[str, ServiceFigures], window_seconds: float) -> dict[str, Any]:
    """Boxes and arrows for the template; a box is red with DLQ entries, amber with lag."""
    boxes = []
    for name, (x, y) in LAYOUT.items():
        fig = figures.get(name, ServiceFigures(name))
        state = "error" if fig.dead_lettered else "lagging" if (fig.lag or 0) > 0 else "ok"
        boxes.append(
            {
                "name": name,
                "x": x,
                "y": y,
                "state": state,
                "rate": fig.per_minute(window_seconds),
                "processed": fig.processed,
                "failed": fig.failed,
                "dead_lettered": fig.dead_lettered,
                "lag": "n/a" if fig.lag is None else fig.lag,
                "mean_ms": None if fig.mean_ms is None else round(fig.mean_ms, 1),
                "requests": fig.requests,
                "server_errors": fig.server_errors,
            }
        )
    arrows = [_arrow(LAYOUT[a], LAYOUT[b]) for a, b in EDGES]
    return {"boxes": boxes, "arrows": arrows, "width": 1050, "height": 250}


def _arrow(source: tuple[int, int], target: tuple[int, int]) -> dict[str, int]:
    """Right edge to left edge across columns; bottom to top within one column."""
    (sx, sy), (tx, ty) = source, target
    if tx > sx:
        return {"x1": sx + BOX_WIDTH, "y1": sy + 45, "x2": tx, "y2": ty + 45}
    return {"x1": sx + BOX_WIDTH // 2, "y1": sy + BOX_HEIGHT, "x2": tx + BOX_WIDTH // 2, "y2": ty}
