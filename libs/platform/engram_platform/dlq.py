"""Dead-lettering: the original message, the consumer, the error and the attempt count."""

from __future__ import annotations

import base64
import logging
from datetime import UTC, datetime
from typing import Any

from engram_events import Topics, topic_name
from engram_events.payloads.dlq import DeadLetter
from engram_platform.outbox.entries import trace_headers
from engram_platform.retry import failure_reason
from engram_platform.sending import KafkaSender

log = logging.getLogger(__name__)
DEAD_LETTER = "dead_letter"
"""The `event_type` header of a DLQ record (it is no event: its value is a `DeadLetter`)."""


class DeadLetters:
    """Publishes DeadLetter records synchronously (acks=all) before the offset moves on, over
    the service's one send path."""

    def __init__(self, sender: KafkaSender, *, topic_prefix: str = "") -> None:
        self.sender = sender
        self.topic = topic_name(Topics.DLQ, topic_prefix)

    async def send(
        self,
        *,
        consumer: str,
        record: Any,
        error: BaseException,
        attempts: int,
        envelope_fields: dict[str, str | None] | None = None,
        error_type: str | None = None,
    ) -> DeadLetter:
        """Publish and return the dead letter; raises if the DLQ itself cannot be written.
        `error_type` replaces the error's own name (`retries_exhausted:...`)."""
        value = record.value if isinstance(record.value, bytes | bytearray) else b""
        key = record.key.decode("utf-8", "replace") if isinstance(record.key, bytes) else None
        fields = envelope_fields or {}
        letter = DeadLetter(
            consumer=consumer,
            topic=record.topic,
            partition=record.partition,
            offset=record.offset,
            key=key,
            event_id=fields.get("event_id"),
            event_type=fields.get("event_type"),
            tenant_id=fields.get("tenant_id"),
            error_type=error_type or getattr(error, "reason", None) or type(error).__name__,
            error=str(error)[:4000] or type(error).__name__,
            reason=failure_reason(error)[:400],
            attempts=attempts,
            value_base64=base64.b64encode(bytes(value)).decode(),
            headers={
                k: v.decode("utf-8", "replace")
                for k, v in (record.headers or ())
                if isinstance(v, bytes | bytearray)
            },
            failed_at=datetime.now(UTC),
        )
        entry = {
            "_id": f"{consumer}:{record.topic}:{record.partition}:{record.offset}",
            "topic": self.topic,
            "key": key or consumer,
            "value": letter.model_dump_json().encode(),
            "headers": trace_headers(),
            "event_type": DEAD_LETTER,
        }
        await self.sender.send([entry])
        log.warning(
            "dead-lettered",
            extra={
                "consumer": consumer,
                "topic": record.topic,
                "partition": record.partition,
                "offset": record.offset,
                "error_type": letter.error_type,
                "attempts": attempts,
                "event_id": letter.event_id,
            },
        )
        return letter
