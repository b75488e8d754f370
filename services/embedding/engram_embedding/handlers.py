"""The embedding handlers: one request in, its `embedding.computed` out; runs batched."""

from __future__ import annotations

from typing import Any

from engram_embedding.service.requests import EmbeddingRequests
from engram_events import Envelope
from engram_events.payloads.embeddings import EmbeddingRequested


class EmbeddingHandlers:
    """The single route, the batch route and the consumer's look-ahead, over one use case."""

    def __init__(self, requests: EmbeddingRequests) -> None:
        self.requests = requests

    async def on_requested(self, event: Envelope[EmbeddingRequested]) -> list[Envelope[Any]]:
        """Vectors for the valid items, `rejected` for the rest."""
        return await self.requests.answer(event)

    async def on_requested_many(
        self, events: list[Envelope[EmbeddingRequested]]
    ) -> list[list[Envelope[Any]] | BaseException]:
        """The batch route: each request's answer, or the exception that failed it."""
        return await self.requests.answer_run(events)

    def prepare(self, events: list[Envelope[EmbeddingRequested]]) -> None:
        """The consumer's look-ahead: queue the fetch's batches for the embedder now."""
        self.requests.prepare(events)
