"""Publishing an event now (acks=all), for request paths that own no state to outbox with."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope, encode, event_type_of, topic_name


async def publish_now(broker: Any, envelope: Envelope[Any], *, topic_prefix: str = "") -> None:
    """Return only once Kafka has the event; the caller reports failure as 503, not success."""
    event_type = event_type_of(envelope.event_type)
    await broker.publish(
        encode(envelope),
        topic_name(event_type.topic, topic_prefix),
        key=event_type.key(envelope.payload).encode(),
        headers={"content-type": "application/json", "event_type": envelope.event_type},
    )
