"""Metric points: what the consumer records reaches the store's flat shape and the pipeline picture."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from aiokafka import TopicPartition
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricsData

from engram_gateway.domain.pipeline import picture, summarize
from engram_platform.metrics import ConsumerMetrics, PipelineMetrics, end_and_committed
from engram_platform.telemetry_store import DELTA_TEMPORALITY, label_key, metric_documents

pytestmark = pytest.mark.unit


def _provider() -> tuple[MeterProvider, InMemoryMetricReader]:
    reader = InMemoryMetricReader(preferred_temporality=DELTA_TEMPORALITY)
    return MeterProvider(metric_readers=[reader]), reader


def _collected(reader: InMemoryMetricReader) -> MetricsData:
    """What the reader holds now (None only before any instrument recorded)."""
    data = reader.get_metrics_data()
    assert data is not None
    return data


def _walk(value: Any) -> list[str]:
    """Every key of every nested dict."""
    if isinstance(value, dict):
        return [k for k in value] + [k for v in value.values() for k in _walk(v)]
    if isinstance(value, list):
        return [k for v in value for k in _walk(v)]
    return []


def test_consumer_outcomes_become_flat_points_without_dotted_keys() -> None:
    provider, reader = _provider()
    meters = ConsumerMetrics("ingest", provider)
    meters.outcome("document.submitted", "applied", 0.02)
    meters.outcome("document.submitted", "applied", 0.04)
    meters.outcome("document.submitted", "dead_lettered", 0.01)
    meters.failure("document.submitted", "ConnectionError")
    docs = list(metric_documents(_collected(reader)))
    assert all("." not in key and "$" not in key for d in docs for key in _walk(d))
    processed = [d for d in docs if d["name"] == "engram.consumer.processed"]
    assert {d["labels"]["outcome"]: d["value"] for d in processed} == {
        "applied": 2,
        "dead_lettered": 1,
    }
    histogram = [d for d in docs if d["name"] == "engram.consumer.handler.duration"]
    assert sum(d["count"] for d in histogram) == 3
    figures = summarize(docs)["ingest"]
    assert (figures.processed, figures.applied, figures.failed, figures.dead_lettered) == (
        3,
        2,
        1,
        1,
    )
    assert figures.mean_ms == pytest.approx(70 / 3, rel=0.01)


def test_a_batch_of_outcomes_counts_each_message_once() -> None:
    provider, reader = _provider()
    meters = ConsumerMetrics("memory", provider)
    meters.outcomes(
        [
            ("record.tombstoned", "applied", 0.01),
            ("record.tombstoned", "applied", 0.03),
            ("record.tombstoned", "dead_lettered", 0.02),
            ("memory.write_requested", "applied", 0.04),
            ("record.tombstoned", "applied", 0.05),
        ]
    )
    docs = list(metric_documents(_collected(reader)))
    processed = {
        (d["labels"]["event_type"], d["labels"]["outcome"]): d["value"]
        for d in docs
        if d["name"] == "engram.consumer.processed"
    }
    assert processed == {
        ("record.tombstoned", "applied"): 3,
        ("record.tombstoned", "dead_lettered"): 1,
        ("memory.write_requested", "applied"): 1,
    }
    histogram = [d for d in docs if d["name"] == "engram.consumer.handler.duration"]
    assert sum(d["count"] for d in histogram) == 5
    figures = summarize(docs)["memory"]
    assert (figures.processed, figures.dead_lettered) == (5, 1)
    assert figures.mean_ms == pytest.approx(30, rel=0.01)


def test_deltas_sum_across_exports_and_lag_keeps_the_latest_reading() -> None:
    provider, reader = _provider()
    meters = ConsumerMetrics("extraction", provider)
    meters.outcome("document.ingested", "applied", 0.01)
    first = list(metric_documents(_collected(reader)))
    meters.outcome("document.ingested", "applied", 0.01)
    second = list(metric_documents(_collected(reader)))
    lag = [
        {
            "name": "engram.consumer.lag",
            "service": "engram-extraction",
            "value": v,
            "time": t,
            "labels": {"service": "extraction", "topic": "engram.documents.v1"},
        }
        for v, t in ((9, datetime(2026, 1, 1, tzinfo=UTC)), (2, datetime(2026, 1, 2, tzinfo=UTC)))
    ]
    figures = summarize(first + second + lag)
    assert figures["extraction"].processed == 2
    assert figures["extraction"].lag == 2
    boxes = {b["name"]: b for b in picture(figures, 60)["boxes"]}
    assert boxes["extraction"]["state"] == "lagging" and boxes["extraction"]["rate"] == 2.0
    assert boxes["memory"]["processed"] == 0 and boxes["memory"]["lag"] == "n/a"


def test_helpers_for_other_services_record_low_cardinality_points() -> None:
    provider, reader = _provider()
    meters = PipelineMetrics("embedding", provider)
    meters.embedded(model="all-MiniLM-L6-v2", batch_size=16, seconds=0.2)
    meters.prune_finished(kind="document", verified_empty=True, seconds=4.0)
    names = {d["name"] for d in metric_documents(_collected(reader))}
    assert names == {
        "engram.embedder.texts",
        "engram.embedder.batch.size",
        "engram.embedder.duration",
        "engram.prune.job.duration",
    }


def test_label_keys_lose_their_dots() -> None:
    assert label_key("http.route") == "http_route"


class FakeAdmin:
    """Topic partitions and committed offsets, as Kafka's admin API reports them."""

    def __init__(self, committed: dict[TopicPartition, int], parts: list[TopicPartition]) -> None:
        self.committed = committed
        self.parts = parts

    async def describe_topics(self, topics: list[str]) -> list[dict[str, Any]]:
        return [
            {
                "topic": t,
                "error_code": 0,
                "partitions": [{"partition": tp.partition} for tp in self.parts if tp.topic == t],
            }
            for t in topics
        ]

    async def list_consumer_group_offsets(self, group_id: str, partitions: Any) -> dict[Any, Any]:
        class Meta:
            def __init__(self, offset: int) -> None:
                self.offset = offset

        return {tp: Meta(off) for tp, off in self.committed.items()}


class FakeConsumer:
    """Partition metadata and log start/end offsets."""

    def __init__(self, ends: dict[TopicPartition, int], starts: dict[TopicPartition, int]) -> None:
        self.ends = ends
        self.starts = starts

    async def end_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.ends[tp] for tp in partitions}

    async def beginning_offsets(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, int]:
        return {tp: self.starts[tp] for tp in partitions}


async def test_lag_is_end_minus_committed_or_earliest_when_nothing_is_committed() -> None:
    a0, a1, b0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
    consumer = FakeConsumer({a0: 10, a1: 5, b0: 7}, {a0: 0, a1: 0, b0: 3})
    admin = FakeAdmin({a0: 8, a1: 5}, [a0, a1, b0])
    lag = await end_and_committed(admin, consumer, "g", ["a", "b"])
    assert lag == {"a": 2, "b": 4}
