"""Publishing events now (acks=all), for request paths that own no state to outbox with."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope, encode, event_type_of, topic_name
from engram_platform.outbox import outbox_entry, publish_entries, trace_headers


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
    """Events of one request sent as the outbox relay sends entries (one record batch per
    partition, one publish span per topic and event type), so both share one header and trace
    path; return only once Kafka has every one of them (a failure may leave some published:
    callers retry with the same event keys, which consumers dedupe)."""
    now = datetime.now(UTC)
    headers = trace_headers()
    entries = [
        outbox_entry(e, topic_prefix, now, order, dict(headers))
        for order, e in enumerate(envelopes)
    ]
    await publish_entries(broker, entries)
