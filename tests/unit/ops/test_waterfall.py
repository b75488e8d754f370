"""Waterfall rows keep parent-child order and scale to the trace's extent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram_gateway.api.ops import _safe_error
from engram_gateway.domain.waterfall import summary, waterfall

pytestmark = pytest.mark.unit
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _span(span_id: str, parent: str | None, start_ms: int, ms: int, service: str) -> dict[str, Any]:
    return {
        "trace_id": "t" * 32,
        "span_id": span_id,
        "parent_span_id": parent,
        "name": f"op-{span_id}",
        "service": service,
        "kind": "INTERNAL",
        "status": "UNSET",
        "start": T0 + timedelta(milliseconds=start_ms),
        "end": T0 + timedelta(milliseconds=start_ms + ms),
        "duration_ms": ms,
        "attributes": [{"key": "engram.document_id", "value": "doc_1"}],
    }


def test_rows_are_depth_first_with_offsets_as_percentages() -> None:
    spans = [
        _span("c", "b", 50, 50, "engram-ingest"),
        _span("a", None, 0, 100, "engram-gateway"),
        _span("b", "a", 10, 90, "engram-gateway"),
        _span("d", "zz", 20, 10, "engram-memory"),
    ]
    rows = waterfall(spans)
    assert [(r.span_id, r.depth) for r in rows] == [("a", 0), ("b", 1), ("c", 2), ("d", 0)]
    assert rows[2].left_pct == 50.0 and rows[2].width_pct == 50.0
    assert rows[0].attributes == [("engram.document_id", "doc_1")]
    line = summary(spans)
    assert line["name"] == "op-a" and line["duration_ms"] == 100.0 and line["span_count"] == 4
    assert line["services"] == ["engram-gateway", "engram-ingest", "engram-memory"]


def test_dead_letter_reasons_do_not_echo_input() -> None:
    error = "1 validation error\npayload.name\n  String too long [type=x, input_value='CANARY secret', input_type=str]"
    shown = _safe_error(error)
    assert "CANARY" not in shown and "input_value=<redacted>" in shown
