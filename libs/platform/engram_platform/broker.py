"""The FastStream Kafka broker every service consumes with, and the producer it publishes by."""

import logging
from types import TracebackType
from typing import Any

from faststream import BaseMiddleware, ContextRepo
from faststream.kafka import KafkaBroker
from faststream.kafka.opentelemetry import KafkaTelemetryMiddleware
from faststream.kafka.response import KafkaPublishCommand
from opentelemetry.sdk.trace import TracerProvider

from engram_platform.kafka_security import broker_security
from engram_platform.sending import KafkaSender, producer_options
from engram_platform.settings import ServiceSettings


class Broker(KafkaBroker):
    """FastStream's broker, owning the `sender` every event leaves by: started before the
    broker's subscribers, stopped after them."""

    def __init__(self, *args: Any, sender: KafkaSender, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sender = sender

    async def start(self) -> None:
        await self.sender.start()
        await super().start()

    async def stop(
        self,
        exc_type: type[BaseException] | None = None,
        exc_val: BaseException | None = None,
        exc_tb: TracebackType | None = None,
    ) -> None:
        try:
            await super().stop(exc_type, exc_val, exc_tb)
        finally:
            await self.sender.stop()


class PublishTelemetry:
    """FastStream's telemetry for what `broker.publish` sends (a DLQ letter, a replay), and
    nothing for consuming: the consumer's own spans trace each fetch, once."""

    def __init__(self, tracer_provider: TracerProvider | None) -> None:
        self.telemetry = KafkaTelemetryMiddleware(tracer_provider=tracer_provider)

    def __call__(
        self, msg: Any | None, /, *, context: ContextRepo
    ) -> BaseMiddleware[KafkaPublishCommand]:
        if msg is None:
            return self.telemetry(msg, context=context)
        return BaseMiddleware(msg, context=context)


def make_broker(
    settings: ServiceSettings, *, service: str, tracer_provider: TracerProvider | None = None
) -> Broker:
    """The broker with W3C trace context on what it publishes, and the service's sender; both
    connect with the configured Kafka security."""
    options = producer_options(settings, service=service)
    return Broker(
        settings.kafka_bootstrap_servers,
        sender=KafkaSender(options),
        client_id=options["client_id"],
        acks="all",
        enable_idempotence=False,
        max_request_size=options["max_request_size"],
        request_timeout_ms=options["request_timeout_ms"],
        security=broker_security(settings),
        middlewares=[PublishTelemetry(tracer_provider)],
        logger=logging.getLogger("engram.faststream"),
        log_level=logging.DEBUG,
    )
