"""An outbox entry: one pending publication in the form it is staged, relayed and sent in."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from opentelemetry import propagate

from engram_events import Envelope, encode, event_type_of, topic_name
from engram_events.registry import RECIPIENT_HEADER


def trace_headers() -> dict[str, str]:
    """The current trace context as Kafka headers."""
    headers: dict[str, str] = {}
    propagate.inject(headers)
    return headers


def outbox_entry(
    envelope: Envelope[Any],
    prefix: str,
    staged_at: datetime,
    order: int,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One pending publication: topic, key, bytes, its place in line, and the causing trace."""
    event_type = event_type_of(envelope.event_type)
    if headers is None:
        headers = trace_headers()
    if event_type.recipient is not None:
        headers = {**headers, RECIPIENT_HEADER: event_type.recipient(envelope.payload)}
    return {
        "_id": str(envelope.event_id),
        "topic": topic_name(event_type.topic, prefix),
        "key": event_type.key(envelope.payload),
        "value": encode(envelope),
        "headers": headers,
        "event_type": envelope.event_type,
        "tenant_id": envelope.tenant_id,
        "staged_at": staged_at,
        "order": order,
    }


def tombstone_entry(topic: str, key: str, entry_id: str) -> dict[str, Any]:
    """An entry for a Kafka tombstone (null value) on a compacted topic."""
    return {
        "_id": entry_id,
        "topic": topic,
        "key": key,
        "value": None,
        "headers": {},
        "event_type": "kafka.tombstone",
        "tenant_id": None,
        "staged_at": datetime.now(UTC),
        "order": next_order(),
    }


_last_order = 0


def next_order() -> int:
    """Microseconds since the epoch times 1000, strictly increasing within this process."""
    global _last_order
    candidate = (time.time_ns() // 1000) * 1000
    _last_order = max(candidate, _last_order + 1)
    return _last_order
