"""The instrumented store: one client span and one duration point per call, no vectors or payloads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from engram_vectors import (
    VECTOR_QUERY_DURATION,
    CollectionNotFound,
    ExactNumpyStore,
    InstrumentedVectorStore,
    Point,
    SparseVector,
    VectorStore,
)

pytestmark = pytest.mark.unit

CANARY = "CANARY-3c0d the boat is moored at pier nine"
FP = "fp-" + "c" * 61


class Telemetry:
    """An in-memory span exporter and metric reader behind one wrapped numpy store."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        tracer = TracerProvider()
        tracer.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.tracer = tracer
        self.store = InstrumentedVectorStore(
            ExactNumpyStore(),
            tracer_provider=tracer,
            meter_provider=MeterProvider(metric_readers=[self.reader]),
        )

    def by_name(self) -> dict[str, Any]:
        return {s.name: s for s in self.spans.get_finished_spans()}

    def durations(self) -> list[Any]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return [
            point
            for rm in data.resource_metrics
            for sm in rm.scope_metrics
            for metric in sm.metrics
            if metric.name == VECTOR_QUERY_DURATION
            for point in metric.data.data_points
        ]


async def test_each_call_is_a_client_span_with_counts_and_no_content() -> None:
    t = Telemetry()
    store = t.store
    assert isinstance(store, VectorStore)
    with t.tracer.get_tracer("t").start_as_current_span("recall") as parent:
        await store.ensure_collection("memories", 3, FP)
        await store.upsert(
            "memories",
            [Point(f"m{n}", [1.0, float(n), 0.0], {"text": CANARY, "n": n}) for n in range(3)],
        )
        hits = await store.search("memories", [1.0, 0.0, 0.0], 2, {"n": [0, 1]})
        assert await store.count("memories") == 3
        assert len(await store.get("memories", ["m0", "missing"])) == 1
        await store.set_payload("memories", ["m0", "m1"], {"note": CANARY})
        await store.delete("memories", ["m2"])
    spans = t.by_name()
    assert set(spans) >= {
        "ensure_collection memories",
        "upsert memories",
        "search memories",
        "count memories",
        "get memories",
        "set_payload memories",
        "delete memories",
    }
    search = spans["search memories"]
    assert search.kind is SpanKind.CLIENT
    assert search.parent.span_id == parent.get_span_context().span_id
    assert dict(search.attributes) == {
        "db.system": "qdrant",
        "db.system.name": "qdrant",
        "db.operation.name": "search",
        "db.collection.name": "memories",
        "db.vector.query.top_k": 2,
        "db.query.filter.fields": 1,
        "db.response.returned_rows": len(hits),
    }
    assert spans["upsert memories"].attributes["db.operation.batch.size"] == 3
    assert spans["set_payload memories"].attributes["db.operation.batch.size"] == 2
    assert spans["count memories"].attributes["db.response.returned_rows"] == 3
    get = spans["get memories"].attributes
    assert get["db.operation.batch.size"] == 2 and get["db.response.returned_rows"] == 1
    dumped = json.dumps([s.to_json() for s in t.spans.get_finished_spans()])
    assert "CANARY" not in dumped and "pier" not in dumped


async def test_hybrid_search_is_traced_with_counts_only() -> None:
    t = Telemetry()
    await t.store.ensure_collection("memories", 3, FP, lexical="engram-lexical-v1")
    await t.store.upsert(
        "memories",
        [Point("m0", [1.0, 0.0, 0.0], {"text": CANARY}, SparseVector((7, 9), (1.0, 2.0)))],
    )
    assert (await t.store.collection_info("memories")).lexical == "engram-lexical-v1"
    hits = await t.store.hybrid_search(
        "memories",
        vector=[1.0, 0.0, 0.0],
        sparse=SparseVector((7, 8, 9), (1.0, 1.0, 1.0)),
        limit=4,
        filter={"text": CANARY},
        idf_filter={"text": CANARY, "n": 1},
    )
    assert [hit.id for hit in hits] == ["m0"]
    span = t.by_name()["hybrid_search memories"]
    assert span.kind is SpanKind.CLIENT
    assert dict(span.attributes) == {
        "db.system": "qdrant",
        "db.system.name": "qdrant",
        "db.operation.name": "hybrid_search",
        "db.collection.name": "memories",
        "db.vector.query.top_k": 4,
        "db.query.filter.fields": 1,
        "engram.vector.query.idf_filter.fields": 2,
        "engram.vector.query.sparse_terms": 3,
        "db.response.returned_rows": 1,
    }
    assert "collection_info memories" in t.by_name()
    dumped = json.dumps([s.to_json() for s in t.spans.get_finished_spans()])
    assert "CANARY" not in dumped and "pier" not in dumped


async def test_durations_are_recorded_by_operation_and_collection() -> None:
    t = Telemetry()
    await t.store.ensure_collection("knowledge", 2, FP)
    await t.store.search("knowledge", [1.0, 0.0], 5)
    await t.store.search("knowledge", [0.0, 1.0], 5)
    points = {p.attributes["operation"]: p for p in t.durations()}
    assert points["search"].count == 2
    assert dict(points["search"].attributes) == {
        "db.system.name": "qdrant",
        "operation": "search",
        "collection": "knowledge",
    }


async def test_a_failing_call_is_an_error_span_named_by_type_and_still_raises() -> None:
    t = Telemetry()
    with pytest.raises(CollectionNotFound):
        await t.store.count("absent")
    [span] = t.spans.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes["error.type"] == "CollectionNotFound"
    assert not span.events, "no exception event: messages may carry names or values"
    [point] = t.durations()
    assert point.attributes["error.type"] == "CollectionNotFound"


async def test_adapter_extras_pass_through() -> None:
    t = Telemetry()
    await t.store.ensure_collection("memories", 4, FP)
    assert await t.store.collection_dimension("memories") == 4
    await t.store.close()
