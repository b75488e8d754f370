"""The local metrics store: metric points in a capped MongoDB collection the ops dashboard reads."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from opentelemetry.sdk.metrics import (
    Counter,
    Histogram,
    ObservableCounter,
    ObservableGauge,
    ObservableUpDownCounter,
    UpDownCounter,
)
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    Gauge,
    HistogramDataPoint,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    NumberDataPoint,
    Sum,
)
from opentelemetry.sdk.metrics.export import Histogram as HistogramData

log = logging.getLogger(__name__)

METRICS_COLLECTION = "metrics"
METRICS_CAP_BYTES = 64 * 1024 * 1024
METRICS_CAP_DOCUMENTS = 50_000
DELTA_TEMPORALITY: dict[type, AggregationTemporality] = {
    Counter: AggregationTemporality.DELTA,
    Histogram: AggregationTemporality.DELTA,
    ObservableCounter: AggregationTemporality.DELTA,
    UpDownCounter: AggregationTemporality.CUMULATIVE,
    ObservableUpDownCounter: AggregationTemporality.CUMULATIVE,
    ObservableGauge: AggregationTemporality.CUMULATIVE,
}
"""Deltas, so the dashboard sums points over a window across processes and restarts."""


def label_key(key: str) -> str:
    """FerretDB refuses dotted keys: `http.route` is stored as `http_route`."""
    return key.replace(".", "_").replace("$", "_")


def _labels(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    return {label_key(k): v for k, v in (attributes or {}).items()}


def _nanos(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1e9, UTC)


def metric_documents(data: MetricsData) -> Iterator[dict[str, Any]]:
    """One flat document per data point: service, name, kind, labels and the numbers."""
    for resource_metrics in data.resource_metrics:
        service = resource_metrics.resource.attributes.get("service.name")
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                base = {"service": service, "name": metric.name, "unit": metric.unit}
                for point in metric.data.data_points:
                    doc: dict[str, Any] = {
                        **base,
                        "time": _nanos(point.time_unix_nano),
                        "start": _nanos(point.start_time_unix_nano or point.time_unix_nano),
                        "labels": _labels(point.attributes),
                    }
                    if isinstance(metric.data, HistogramData) and isinstance(
                        point, HistogramDataPoint
                    ):
                        doc.update(
                            kind="histogram",
                            count=point.count,
                            sum=point.sum,
                            min=point.min,
                            max=point.max,
                            bounds=list(point.explicit_bounds),
                            bucket_counts=list(point.bucket_counts),
                        )
                    elif isinstance(point, NumberDataPoint):
                        kind = "gauge" if isinstance(metric.data, Gauge) else "sum"
                        if isinstance(metric.data, Sum) and not metric.data.is_monotonic:
                            kind = "updown"
                        doc.update(kind=kind, value=point.value)
                    else:
                        continue
                    yield doc


class MongoMetricExporter(MetricExporter):
    """Writes metric points to a capped collection; runs on the reader's thread (sync pymongo)."""

    def __init__(self, uri: str, database: str) -> None:
        super().__init__(preferred_temporality=DELTA_TEMPORALITY)
        from pymongo import MongoClient

        self.client: Any = MongoClient(uri, serverSelectionTimeoutMS=3000, tz_aware=True)
        self.database = database
        self._ready = False

    def _collection(self) -> Any:
        db = self.client[self.database]
        if not self._ready:
            if METRICS_COLLECTION not in db.list_collection_names():
                try:
                    db.create_collection(
                        METRICS_COLLECTION,
                        capped=True,
                        size=METRICS_CAP_BYTES,
                        max=METRICS_CAP_DOCUMENTS,
                    )
                except Exception:
                    log.debug("metrics collection exists or cannot be capped")
            self._ready = True
        return db[METRICS_COLLECTION]

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        docs = list(metric_documents(metrics_data))
        if not docs:
            return MetricExportResult.SUCCESS
        try:
            self._collection().insert_many(docs, ordered=False)
        except Exception as exc:
            log.warning("metric export failed", extra={"error_type": type(exc).__name__})
            return MetricExportResult.FAILURE
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.client.close()
