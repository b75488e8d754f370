"""What every service's composition root builds: broker, Mongo, outbox relay, consumer.

`Runtime.build` configures without IO (the service's options included); `Runtime.connected`
opens the clients and yields a `ConnectedRuntime`, whose clients are all there.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider

from engram_platform import idempotency, outbox
from engram_platform.broker import Broker, make_broker
from engram_platform.consuming import BULK_POLL_MS, OUTBOXED, Consumer, Delivery, parked_store
from engram_platform.indexes import Expiry, Indexes, ensure_indexes, merge
from engram_platform.kafka_security import kafka_security_options
from engram_platform.logs import configure_logging
from engram_platform.metrics import ConsumerLagSampler, ConsumerMetrics, setup_metrics
from engram_platform.mongo import connect_mongo, ping
from engram_platform.outbox import Outbox, OutboxRelay
from engram_platform.retry import RetryPolicy
from engram_platform.settings import ServiceSettings
from engram_platform.tracing import setup_tracing
from engram_platform.tracing_mongo import MongoSpans

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Runtime:
    """A service's configuration and broker; built without IO, connected inside the lifespan."""

    service: str
    settings: ServiceSettings
    tracer_provider: TracerProvider
    broker: Broker
    meter_provider: MeterProvider | None = None
    recover_collections: tuple[str, ...] = ()
    """Collections whose documents may hold embedded events after a crash (see `outbox`)."""
    indexes: Indexes | None = None
    """The service's stores' declared indexes (the platform's own are added to them)."""
    delivery: Delivery = OUTBOXED
    batch_size: int | None = None
    """Records per fetch; the settings' `consumer_batch_size` when not given."""
    batch_timeout_ms: int = BULK_POLL_MS
    """How long the bulk lane's idle fetch waits (the interactive lane's: `consumer_poll_ms`)."""

    @classmethod
    def build(
        cls,
        service: str,
        settings: ServiceSettings,
        *,
        install_global: bool = True,
        recover_collections: Sequence[str] = (),
        indexes: Indexes | None = None,
        delivery: Delivery = OUTBOXED,
        batch_size: int | None = None,
        batch_timeout_ms: int = BULK_POLL_MS,
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
            recover_collections=tuple(recover_collections),
            indexes=indexes,
            delivery=delivery,
            batch_size=batch_size,
            batch_timeout_ms=batch_timeout_ms,
        )

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[ConnectedRuntime]:
        """Open Mongo and build the outbox, its relay and the consumer; close all on exit."""
        settings = self.settings
        mongo = connect_mongo(
            settings.mongodb_uri.get_secret_value(),
            app_name=f"engram-{self.service}",
            event_listeners=self._mongo_listeners(),
        )
        db = mongo[settings.database_name(self.service)]
        box = Outbox(db, topic_prefix=settings.topic_prefix)
        consumer = Consumer(
            service=self.service,
            broker=self.broker,
            db=db,
            outbox=box,
            topic_prefix=settings.topic_prefix,
            delivery=self.delivery,
            retry=RetryPolicy(
                settings.max_attempts, settings.retry_base_seconds, settings.retry_max_seconds
            ),
            batch_size=self.batch_size or settings.consumer_batch_size,
            batch_timeout_ms=self.batch_timeout_ms,
            poll_ms=settings.consumer_poll_ms,
            heartbeat_ms=settings.consumer_heartbeat_ms,
            bulk_part=settings.consumer_bulk_part,
            bulk_share=settings.consumer_bulk_share,
            tracer_provider=self.tracer_provider,
            metrics=ConsumerMetrics(self.service, self.meter_provider),
            parked_poll_seconds=settings.parked_poll_seconds,
        )
        relay = OutboxRelay(
            box,
            self.broker.sender,
            service=self.service,
            interval=settings.relay_interval_seconds,
            recover_collections=[db[name] for name in self.recover_collections],
        )
        try:
            yield ConnectedRuntime(
                service=self.service,
                settings=settings,
                tracer_provider=self.tracer_provider,
                meter_provider=self.meter_provider,
                broker=self.broker,
                mongo=mongo,
                db=db,
                outbox=box,
                relay=relay,
                consumer=consumer,
                indexes=self.indexes or {},
            )
        finally:
            await consumer.stop()
            await relay.stop()
            self.tracer_provider.force_flush(5000)
            if self.meter_provider is not None:
                self.meter_provider.force_flush(5000)
            mongo.close()

    def _mongo_listeners(self) -> list[MongoSpans]:
        """Command spans when tracing is on; the telemetry database's own reads stay untraced."""
        if not self.settings.tracing_enabled:
            return []
        return [MongoSpans(self.tracer_provider, skip_databases=[self.settings.telemetry_database])]


@dataclass(frozen=True)
class ConnectedRuntime:
    """A service's clients, all connected: what `register` and the routes are handed."""

    service: str
    settings: ServiceSettings
    tracer_provider: TracerProvider
    meter_provider: MeterProvider | None
    broker: Broker
    mongo: Any
    db: Any
    outbox: Outbox
    relay: OutboxRelay
    consumer: Consumer
    indexes: Indexes

    async def ensure_indexes(self) -> list[Expiry]:
        """Create the platform's and the service's declared indexes; the expiries to sweep."""
        declared = merge(idempotency.INDEXES, outbox.INDEXES, parked_store.INDEXES, self.indexes)
        return await ensure_indexes(self.db, declared)

    def start_relay(self) -> None:
        """Begin publishing staged events (call after the broker has started)."""
        self.relay.start()

    def lag_sampler(self) -> ConsumerLagSampler:
        """Samples this service's consumer lag (start it once the consumer has subscribed)."""
        return ConsumerLagSampler(
            bootstrap=self.settings.kafka_bootstrap_servers,
            security=kafka_security_options(self.settings),
            service=self.service,
            group_id=self.consumer.group_id,
            topics=self.consumer.topics,
            interval=self.settings.lag_interval_seconds,
            provider=self.meter_provider,
        )

    async def ready(self) -> dict[str, bool]:
        """What /readyz reports: each dependency answering now."""
        mongo_ok = await ping(self.db)
        kafka_ok = False
        try:
            kafka_ok = bool(await self.broker.ping(timeout=2.0))
        except Exception:
            kafka_ok = False
        return {"mongodb": mongo_ok, "kafka": kafka_ok}
