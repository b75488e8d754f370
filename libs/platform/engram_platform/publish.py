"""Publishing events now (acks=all), for request paths that own no state to outbox with."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind

from engram_events import Envelope, encode, event_type_of, topic_name
from engram_platform.broker import raw_producer
from engram_platform.outbox import Message, send_batched

_tracer = trace.get_tracer("engram.publish")


async def publish_now(broker: Any, envelope: Envelope[Any], *, topic_prefix: str = "") -> None:
    """Return only once Kafka has the event; the caller reports failure as 503, not success."""
    event_type = event_type_of(envelope.event_type)
    await broker.publish(
        encode(envelope),
        topic_name(event_type.topic, topic_prefix),
        key=event_type.key(envelope.payload).encode(),
        headers={"content-type": "application/json", "event_type": envelope.event_type},
    )


async def publish_many_now(
    broker: Any, envelopes: Sequence[Envelope[Any]], *, topic_prefix: str = ""
) -> None:
    """Events of one request in one record batch per partition, under one publish span; return
    only once Kafka has every one of them (a failure may leave some published: callers retry
    with the same event keys, which consumers dedupe)."""
    by_topic: dict[str, list[Envelope[Any]]] = {}
    for envelope in envelopes:
        topic = topic_name(event_type_of(envelope.event_type).topic, topic_prefix)
        by_topic.setdefault(topic, []).append(envelope)
    producer = raw_producer(broker)
    delivered: list[Any] = []
    for topic, theirs in by_topic.items():
        with _tracer.start_as_current_span(
            f"{topic} publish",
            kind=SpanKind.PRODUCER,
            attributes={
                "messaging.system": "kafka",
                "messaging.operation.type": "publish",
                "messaging.destination.name": topic,
                "messaging.batch.message_count": len(theirs),
            },
        ):
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            traced = [(name, value.encode()) for name, value in carrier.items()]
            messages: list[Message] = [
                (
                    event_type_of(e.event_type).key(e.payload).encode(),
                    encode(e),
                    [
                        ("content-type", b"application/json"),
                        ("event_type", e.event_type.encode()),
                        *traced,
                    ],
                )
                for e in theirs
            ]
            delivered += await send_batched(producer, topic, messages)
    await asyncio.gather(*delivered)
