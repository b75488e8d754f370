"""Publishing a request's events now (acks=all): the gateway owns no state to outbox them with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram_events import Envelope
from engram_platform.publish import publish_many_now, publish_now


class EventPublisher:
    """Returns only once Kafka has the events; a failure raises for the route to answer 503."""

    def __init__(self, broker: Any, topic_prefix: str) -> None:
        self.broker = broker
        self.topic_prefix = topic_prefix

    async def publish(self, event: Envelope[Any]) -> None:
        """One event."""
        await publish_now(self.broker, event, topic_prefix=self.topic_prefix)

    async def publish_many(self, events: Sequence[Envelope[Any]]) -> None:
        """A request's events, batched per partition."""
        await publish_many_now(self.broker, events, topic_prefix=self.topic_prefix)
