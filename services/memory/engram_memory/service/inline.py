"""Single writes stored in one pass: the memory service embeds their content with the embedder
of the space it stores into and stores it in the same batch, instead of asking the embedding
service and waiting for a second pass (two Kafka hops and a second batch per write)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from engram_embedders import Embedder
from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import EMBEDDING_COMPUTED, EMBEDDING_REQUESTED
from engram_events.payloads.embeddings import (
    EmbeddedItem,
    EmbeddingComputed,
    EmbeddingRequested,
    VectorProvenance,
)
from engram_events.payloads.memories import MemoryWriteRequested
from engram_memory.domain.events import REQUESTER
from engram_memory.service.storing import Storing
from engram_memory.service.writes import Writes

log = logging.getLogger(__name__)
Slot = tuple[int, int]
"""An answer's place: the input's index, and the event's index in that input's answer."""


class InlineEmbedding:
    """Opens the rows as `Writes` does, then answers each vector request of ours here (and each
    carried vector) with `Storing`, so the write's answer is `memory.stored` rather than
    `embedding.requested`. A model call that fails leaves the requests to the embedding
    service, as before; a failed store fails the batch, which the consumer retries."""

    def __init__(self, writes: Writes, storing: Storing, embedder: Callable[[], Embedder]) -> None:
        self.writes = writes
        self.storing = storing
        self.embedder = embedder
        """The embedder of the space stored into now (a reindex's switch changes it)."""

    async def requested(
        self, requests: list[Envelope[MemoryWriteRequested]]
    ) -> list[list[Envelope[Any]]]:
        """Each input's answer as if handled alone, vectors stored in the same pass."""
        results = await self.writes.requested(requests)
        answers: dict[Slot, Envelope[EmbeddingComputed]] = {}
        asked: dict[Slot, Envelope[EmbeddingRequested]] = {}
        for i, result in enumerate(results):
            for n, event in enumerate(result):
                if getattr(event.payload, "requester", None) != REQUESTER:
                    continue
                if event.event_type == EMBEDDING_COMPUTED.name:
                    answers[(i, n)] = event
                elif event.event_type == EMBEDDING_REQUESTED.name:
                    asked[(i, n)] = event
        answers.update(await self._computed(asked))
        if not answers:
            return results
        slots = sorted(answers)
        stored = dict(
            zip(slots, await self.storing.computed([answers[s] for s in slots]), strict=True)
        )
        return [
            [
                out
                for n, event in enumerate(result)
                for out in (stored[(i, n)] if (i, n) in stored else [event])
            ]
            for i, result in enumerate(results)
        ]

    async def _computed(
        self, asked: dict[Slot, Envelope[EmbeddingRequested]]
    ) -> dict[Slot, Envelope[EmbeddingComputed]]:
        """The answers to the requests, embedded in one model call; none when it fails."""
        if not asked:
            return {}
        texts = [item.text for event in asked.values() for item in event.payload.items]
        try:
            embedded = await self.embedder().embed(texts)
        except Exception as exc:
            log.warning(
                "inline embedding failed; the embedding service answers instead",
                extra={"requests": len(asked), "error_type": type(exc).__name__},
            )
            return {}
        provenance = VectorProvenance(**embedded.provenance.model_dump())
        vectors = iter(embedded.vectors)
        answers: dict[Slot, Envelope[EmbeddingComputed]] = {}
        for slot, event in asked.items():
            request = event.payload
            items = [
                EmbeddedItem(item_id=item.item_id, vector=next(vectors).tolist())
                for item in request.items
            ]
            computed = EmbeddingComputed(
                request_id=request.request_id,
                requester=request.requester,
                purpose=request.purpose,
                items=items,
                provenance=provenance,
            )
            answers[slot] = new_event(
                EMBEDDING_COMPUTED,
                computed,
                tenant_id=event.tenant_id,
                caused_by=event,
                event_id=derive_event_id(event.event_id, "computed"),
            )
        return answers
