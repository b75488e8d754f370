"""The local span store packs a trace's spans into one row and gives them back sanitized."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from engram_platform.tracing import span_batches, unpack_spans

pytestmark = pytest.mark.unit
CANARY = "CANARY the courier leaves the parcel behind the green gate on Thursdays"


def _finished_spans() -> list:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for document in ("doc_1", "doc_2"):
        with tracer.start_as_current_span(
            "POST /v1/documents", attributes={"engram.document_id": document}
        ):
            with tracer.start_as_current_span("insert blobs", attributes={"db.query.text": CANARY}):
                pass
    return list(exporter.get_finished_spans())


def test_one_row_per_trace_holding_its_spans_and_the_ids_they_name() -> None:
    rows = span_batches(_finished_spans())
    assert len(rows) == 2
    for row in rows:
        spans = unpack_spans(row)
        assert row["count"] == len(spans) == 2
        assert {s["trace_id"] for s in spans} == {row["trace_id"]}
        assert {s["name"] for s in spans} == {"POST /v1/documents", "insert blobs"}
        child = next(s for s in spans if s["name"] == "insert blobs")
        parent = next(s for s in spans if s["name"] == "POST /v1/documents")
        assert child["parent_span_id"] == parent["span_id"]
        earliest = min(s["start"] for s in spans)
        assert abs((row["start"] - earliest).total_seconds()) < 0.001, "BSON keeps milliseconds"
    assert sorted(i for row in rows for i in row["engram_ids"]) == ["doc_1", "doc_2"]


def test_stored_spans_carry_no_content() -> None:
    rows = span_batches(_finished_spans())
    assert all(CANARY not in str(unpack_spans(row)) for row in rows)
    assert all(b"CANARY" not in row["packed"] for row in rows)
