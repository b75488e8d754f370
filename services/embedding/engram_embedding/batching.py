"""A consumer that embeds every request of a delivered Kafka batch together before handling each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram_embedding.handlers import EmbeddingHandlers
from engram_events import Envelope, PoisonMessage, decode
from engram_events.catalog import EMBEDDING_REQUESTED
from engram_platform.consumer import Consumer, Outcome


class BatchingConsumer(Consumer):
    """Prefetches the batch's embeddings in `batch_size` chunks; the fetch waits `linger_ms`."""

    def __init__(self, handlers: EmbeddingHandlers, linger_ms: int, **kwargs: Any) -> None:
        super().__init__(batch_timeout_ms=linger_ms, **kwargs)
        self.handlers = handlers

    async def process_batch(self, records: Sequence[Any]) -> list[Outcome]:
        """Embed all valid texts of the batch at once; per-event handling then reuses them.

        A redelivered (already applied) request is embedded again and its vectors dropped: rare,
        and cheaper than a second dedup lookup per batch.
        """
        requests: list[Envelope[Any]] = []
        for record in records:
            try:
                envelope = decode(record.value)
            except PoisonMessage:
                continue
            if envelope.event_type == EMBEDDING_REQUESTED.name:
                requests.append(envelope)
        await self.handlers.prefetch(requests)
        try:
            return await super().process_batch(records)
        finally:
            self.handlers.forget()
