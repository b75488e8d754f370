"""Publishing events now (acks=all), for request paths that own no state to outbox with."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope
from engram_platform.broker import Broker
from engram_platform.outbox.entries import outbox_entry, trace_headers


async def publish_now(broker: Broker, envelope: Envelope[Any], *, topic_prefix: str = "") -> None:
    """Return only once Kafka has the event; the caller reports failure as 503, not success."""
    await publish_many_now(broker, [envelope], topic_prefix=topic_prefix)


async def publish_many_now(
    broker: Broker, envelopes: Sequence[Envelope[Any]], *, topic_prefix: str = ""
) -> None:
    """Events of one request sent as the outbox relay sends entries (one publish span per topic
    and event type), over the broker's one sender; return
    only once Kafka has every one of them (a failure may leave some published: callers retry
    with the same event keys, which consumers dedupe)."""
    now = datetime.now(UTC)
    headers = trace_headers()
    entries = [
        outbox_entry(e, topic_prefix, now, order, dict(headers))
        for order, e in enumerate(envelopes)
    ]
    await broker.sender.send(entries)
