"""OpenTelemetry metrics per service: OTLP when configured, else the local metrics store.

Instruments carry low-cardinality attributes only (service, event type, outcome, route):
never tenant ids, document ids or content.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import MeterProvider as MeterProviderApi
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource

from engram_platform.settings import ServiceSettings
from engram_platform.telemetry_store import MongoMetricExporter

log = logging.getLogger(__name__)

METER = "engram"
PROCESSED = "engram.consumer.processed"
FAILED = "engram.consumer.failed"
DEAD_LETTERED = "engram.consumer.dead_lettered"
PARKED = "engram.consumer.parked"
RETRIED = "engram.consumer.retried"
RELEASED = "engram.consumer.released"
HANDLER_DURATION = "engram.consumer.handler.duration"
LAG = "engram.consumer.lag"
EMBEDDER_TEXTS = "engram.embedder.texts"
EMBEDDER_BATCH_SIZE = "engram.embedder.batch.size"
EMBEDDER_DURATION = "engram.embedder.duration"
PRUNE_JOB_DURATION = "engram.prune.job.duration"
_SECONDS_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def setup_metrics(
    service: str, settings: ServiceSettings, *, install_global: bool = True
) -> MeterProvider:
    """A provider with service.name set, read periodically into OTLP or the local store."""
    readers = []
    if settings.metrics_enabled:
        exporter: MetricExporter
        if settings.otlp_endpoint:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            exporter = OTLPMetricExporter(
                endpoint=f"{settings.otlp_endpoint.rstrip('/')}/v1/metrics"
            )
        else:
            exporter = MongoMetricExporter(
                settings.mongodb_uri.get_secret_value(), settings.telemetry_database
            )
        interval_ms = int(settings.metrics_interval_seconds * 1000)
        readers.append(PeriodicExportingMetricReader(exporter, export_interval_millis=interval_ms))
    provider = MeterProvider(
        metric_readers=readers,
        resource=Resource.create({"service.name": f"engram-{service}"}),
    )
    if install_global:
        metrics.set_meter_provider(provider)
    return provider


def _meter(provider: MeterProviderApi | None) -> Any:
    return (provider or metrics.get_meter_provider()).get_meter(METER)


class ConsumerMetrics:
    """What the consumer runtime counts per message: outcome, failures, dead letters, latency."""

    def __init__(self, service: str, provider: MeterProviderApi | None = None) -> None:
        meter = _meter(provider)
        self.service = service
        self.processed = meter.create_counter(
            PROCESSED, unit="{message}", description="messages handled, by outcome"
        )
        self.failed = meter.create_counter(
            FAILED, unit="{attempt}", description="handler attempts that raised (then retried)"
        )
        self.dead_lettered = meter.create_counter(
            DEAD_LETTERED, unit="{message}", description="messages sent to the DLQ"
        )
        self.parked_inputs = meter.create_counter(
            PARKED, unit="{message}", description="inputs parked, by status (parked or waiting)"
        )
        self.retried_inputs = meter.create_counter(
            RETRIED, unit="{message}", description="parked inputs run again, by result"
        )
        self.released_inputs = meter.create_counter(
            RELEASED, unit="{message}", description="parked inputs that left the lane"
        )
        self.duration = meter.create_histogram(
            HANDLER_DURATION,
            unit="s",
            description="decode to ack, per message",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS,
        )

    def outcome(self, event_type: str, outcome: str, seconds: float) -> None:
        """One message finished with this outcome."""
        self.outcomes([(event_type, outcome, seconds)])

    def outcomes(self, finished: Sequence[tuple[str, str, float]]) -> None:
        """A batch's messages: one count per event type and outcome, one duration each."""
        attrs: dict[tuple[str, str], dict[str, str]] = {}
        for event_type, outcome, seconds in finished:
            key = (event_type, outcome)
            if key not in attrs:
                attrs[key] = {"service": self.service, "event_type": event_type, "outcome": outcome}
            self.duration.record(seconds, attrs[key])
        tally = Counter((event_type, outcome) for event_type, outcome, _ in finished)
        for (event_type, outcome), count in tally.items():
            self.processed.add(count, attrs[(event_type, outcome)])
            if outcome == "dead_lettered":
                self.dead_lettered.add(count, {"service": self.service, "event_type": event_type})

    def failure(self, event_type: str, error_type: str) -> None:
        """One handler attempt raised a retryable error."""
        self.failed.add(
            1, {"service": self.service, "event_type": event_type, "error_type": error_type}
        )

    def parked(self, event_type: str, status: str) -> None:
        """One input parked: its own attempt failed, or it waits behind its key's."""
        self.parked_inputs.add(
            1, {"service": self.service, "event_type": event_type, "status": status}
        )

    def retried(self, event_type: str, result: str) -> None:
        """One parked input run again, and what became of it."""
        self.retried_inputs.add(
            1, {"service": self.service, "event_type": event_type, "result": result}
        )

    def released(self, event_type: str) -> None:
        """One parked input left the lane (applied, dead-lettered or found applied)."""
        self.released_inputs.add(1, {"service": self.service, "event_type": event_type})


class PipelineMetrics:
    """Embedder throughput and batch sizes, prune jobs; vector calls are timed in engram_vectors."""

    def __init__(self, service: str, provider: MeterProviderApi | None = None) -> None:
        meter = _meter(provider)
        self.service = service
        self.embedder_texts = meter.create_counter(
            EMBEDDER_TEXTS, unit="{text}", description="texts embedded"
        )
        self.embedder_batch = meter.create_histogram(
            EMBEDDER_BATCH_SIZE,
            unit="{text}",
            description="texts per embedder call",
            explicit_bucket_boundaries_advisory=_BATCH_BUCKETS,
        )
        self.embedder_duration = meter.create_histogram(
            EMBEDDER_DURATION,
            unit="s",
            description="one embedder call",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS,
        )
        self.prune_job = meter.create_histogram(
            PRUNE_JOB_DURATION,
            unit="s",
            description="prune job from start to verified",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS,
        )

    def embedded(self, *, model: str, batch_size: int, seconds: float) -> None:
        """One embedder call: how many texts and how long."""
        attrs = {"service": self.service, "model": model}
        self.embedder_texts.add(batch_size, attrs)
        self.embedder_batch.record(batch_size, attrs)
        self.embedder_duration.record(seconds, attrs)

    def prune_finished(self, *, kind: str, verified_empty: bool | None, seconds: float) -> None:
        """A prune job reached its end state."""
        self.prune_job.record(
            seconds,
            {"service": self.service, "kind": kind, "verified_empty": str(verified_empty).lower()},
        )


async def end_and_committed(
    admin: Any, consumer: Any, group_id: str, topics: Iterable[str]
) -> dict[str, int]:
    """Lag per topic for one group: log-end offset minus committed (or earliest) per partition."""
    from aiokafka import TopicPartition

    wanted = set(topics)
    described = await admin.describe_topics(sorted(wanted))
    partitions = [
        TopicPartition(topic["topic"], part["partition"])
        for topic in described
        if not topic.get("error_code")
        for part in topic["partitions"]
    ]
    if not partitions:
        return {}
    committed = await admin.list_consumer_group_offsets(group_id, partitions=partitions)
    ends = await consumer.end_offsets(partitions)
    starts = await consumer.beginning_offsets(partitions)
    lag: dict[str, int] = {topic: 0 for topic in wanted}
    for tp in partitions:
        meta = committed.get(tp)
        position = meta.offset if meta is not None and meta.offset >= 0 else starts[tp]
        lag[tp.topic] += max(0, ends[tp] - position)
    return lag


class ConsumerLagSampler:
    """Samples a consumer group's lag from Kafka every few seconds into a gauge."""

    def __init__(
        self,
        *,
        bootstrap: str,
        security: Mapping[str, Any] | None = None,
        service: str,
        group_id: str,
        topics: Iterable[str],
        interval: float,
        provider: MeterProviderApi | None = None,
    ) -> None:
        self.bootstrap = bootstrap
        self.security = dict(security or {})
        self.service = service
        self.group_id = group_id
        self.topics = sorted(topics)
        self.interval = interval
        self.gauge = _meter(provider).create_gauge(
            LAG, unit="{message}", description="log-end offset minus committed offset"
        )
        self.last: dict[str, int] = {}

    async def sample_once(self, admin: Any, consumer: Any) -> dict[str, int]:
        """One reading, recorded per topic."""
        lag = await end_and_committed(admin, consumer, self.group_id, self.topics)
        for topic, value in lag.items():
            self.gauge.set(value, {"service": self.service, "group": self.group_id, "topic": topic})
        self.last = lag
        return lag

    async def run(self) -> None:
        """Background loop; Kafka hiccups skip a sample, never stop the service."""
        from aiokafka import AIOKafkaConsumer
        from aiokafka.admin import AIOKafkaAdminClient

        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap, **self.security)
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, enable_auto_commit=False, **self.security
        )
        await admin.start()
        await consumer.start()
        try:
            while True:
                try:
                    await self.sample_once(admin, consumer)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    log.debug("lag sample failed", extra={"error_type": type(exc).__name__})
                await asyncio.sleep(self.interval)
        finally:
            await consumer.stop()
            await admin.close()
