"""Handing events to Kafka and returning only once the broker has acknowledged them."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope
from engram_platform.publish import publish_now


class KafkaPublisher:
    """acks=all on an idempotent producer: an acknowledged event survives a broker restart."""

    def __init__(self, broker: Any, topic_prefix: str = "") -> None:
        self.broker = broker
        self.prefix = topic_prefix

    async def publish(self, envelope: Envelope[Any]) -> None:
        """Publish now; raises when Kafka did not acknowledge."""
        await publish_now(self.broker, envelope, topic_prefix=self.prefix)
