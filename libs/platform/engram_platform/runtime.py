"""What every service's composition root builds: broker, Mongo, outbox relay, consumer."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from faststream.kafka import KafkaBroker
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from engram_platform import idempotency, outbox
from engram_platform.broker import make_broker
from engram_platform.consumer import Consumer
from engram_platform.indexes import Expiry, Indexes, ensure_indexes, merge
from engram_platform.logs import configure_logging
from engram_platform.metrics import ConsumerLagSampler, ConsumerMetrics, setup_metrics
from engram_platform.mongo import connect_mongo, ping
from engram_platform.outbox import Outbox, OutboxRelay
from engram_platform.retry import RetryPolicy
from engram_platform.settings import ServiceSettings
from engram_platform.tracing import setup_tracing
from engram_platform.tracing_mongo import MongoSpans

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    """A service's clients; built without IO, connected inside the lifespan."""

    service: str
    settings: ServiceSettings
    tracer_provider: TracerProvider
    broker: KafkaBroker
    mongo: Any = None
    db: Any = None
    outbox: Outbox | None = None
    relay: OutboxRelay | None = None
    consumer: Consumer | None = None
    recover_collections: list[str] = field(default_factory=list)
    indexes: Indexes = field(default_factory=dict)
    """The service's stores' declared indexes (the platform's own are added to them)."""
    meter_provider: MeterProvider | None = None

    @classmethod
    def build(
        cls, service: str, settings: ServiceSettings, *, install_global: bool = True
    ) -> Runtime:
        """Configure logging, tracing, metrics and the broker; nothing connects yet."""
        if install_global:
            configure_logging(service, settings.log_level)
        provider = setup_tracing(service, settings, install_global=install_global)
        meters = setup_metrics(service, settings, install_global=install_global)
        broker = make_broker(settings, service=service, tracer_provider=provider)
        return cls(
            service=service,
            settings=settings,
            tracer_provider=provider,
            broker=broker,
            meter_provider=meters,
        )

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[Runtime]:
        """Open Mongo, start the outbox relay, and build the consumer; close all on exit."""
        self.mongo = connect_mongo(
            self.settings.mongodb_uri.get_secret_value(),
            app_name=f"engram-{self.service}",
            event_listeners=self._mongo_listeners(),
        )
        self.db = self.mongo[self.settings.database_name(self.service)]
        self.outbox = Outbox(self.db, topic_prefix=self.settings.topic_prefix)
        self.consumer = Consumer(
            service=self.service,
            broker=self.broker,
            db=self.db,
            outbox=self.outbox,
            topic_prefix=self.settings.topic_prefix,
            retry=RetryPolicy(
                self.settings.max_attempts,
                self.settings.retry_base_seconds,
                self.settings.retry_max_seconds,
            ),
            batch_size=self.settings.consumer_batch_size,
            tracer_provider=self.tracer_provider,
            metrics=ConsumerMetrics(self.service, self.meter_provider),
        )
        self.relay = OutboxRelay(
            self.outbox,
            self.broker,
            service=self.service,
            interval=self.settings.relay_interval_seconds,
            recover_collections=[self.db[name] for name in self.recover_collections],
        )
        try:
            yield self
        finally:
            if self.relay:
                await self.relay.stop()
            self.tracer_provider.force_flush(5000)
            if self.meter_provider is not None:
                self.meter_provider.force_flush(5000)
            self.mongo.close()

    async def ensure_indexes(self) -> list[Expiry]:
        """Create the platform's and the service's declared indexes; the expiries to sweep."""
        declared = merge(idempotency.INDEXES, outbox.INDEXES, self.indexes)
        return await ensure_indexes(self.db, declared)

    def _mongo_listeners(self) -> list[MongoSpans]:
        """Command spans when tracing is on; the telemetry database's own reads stay untraced."""
        if not self.settings.tracing_enabled:
            return []
        return [MongoSpans(self.tracer_provider, skip_databases=[self.settings.telemetry_database])]

    def start_relay(self) -> None:
        """Begin publishing staged events (call after the broker has started)."""
        assert self.relay is not None
        self.relay.start()

    def lag_sampler(self) -> ConsumerLagSampler:
        """Samples this service's consumer lag (start it once the consumer has subscribed)."""
        assert self.consumer is not None
        return ConsumerLagSampler(
            bootstrap=self.settings.kafka_bootstrap_servers,
            service=self.service,
            group_id=self.consumer.group_id,
            topics=self.consumer.topics,
            interval=self.settings.lag_interval_seconds,
            provider=self.meter_provider,
        )

    async def ready(self) -> dict[str, bool]:
        """What /readyz reports: each dependency answering now."""
        mongo_ok = self.db is not None and await ping(self.db)
        kafka_ok = False
        try:
            kafka_ok = bool(await self.broker.ping(timeout=2.0))
        except Exception:
            kafka_ok = False
        return {"mongodb": mongo_ok, "kafka": kafka_ok}
