"""Single writes stored in one pass: the memory service embeds their content with the embedder
of the space it stores into and stores it in the same batch, instead of asking the embedding
service and waiting for a second pass (two Kafka hops and a second batch per write). The model
call starts with the pass and runs while the rows are opened, so a write waits for the longer
of the two rather than for both."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engram_embedders import Embedder, Embeddings, Provenance
from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import EMBEDDING_COMPUTED, EMBEDDING_REQUESTED
from engram_events.content import content_problem
from engram_events.payloads.embeddings import (
    EmbeddedItem,
    EmbeddingComputed,
    EmbeddingRequested,
    VectorProvenance,
)
from engram_events.payloads.memories import MemoryWriteRequested
from engram_memory.domain.events import REQUESTER
from engram_memory.service.storing import Storing
from engram_memory.service.writes import OpenedRows, Writes

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
        ahead = self._embed_ahead(requests)
        opened: OpenedRows = {}
        try:
            results = await self.writes.requested(requests, opened)
        except BaseException:
            _drop(ahead)
            raise
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
        answers.update(await self._computed(asked, ahead))
        if not answers:
            return results
        slots = sorted(answers)
        stored = dict(
            zip(
                slots,
                await self.storing.computed([answers[s] for s in slots], opened),
                strict=True,
            )
        )
        return [
            [
                out
                for n, event in enumerate(result)
                for out in (stored[(i, n)] if (i, n) in stored else [event])
            ]
            for i, result in enumerate(results)
        ]

    def _embed_ahead(self, requests: list[Envelope[MemoryWriteRequested]]) -> Ahead | None:
        """The model call for every content that may need a vector (valid, carrying none),
        started now so it runs while the rows are opened; None when there is nothing to embed."""
        texts = list(
            dict.fromkeys(
                e.payload.content
                for e in requests
                if e.payload.vector is None
                and content_problem(e.payload.content, self.writes.limits) is None
            )
        )
        if not texts:
            return None
        return Ahead(texts, asyncio.ensure_future(self.embedder().embed(texts)))

    async def _computed(
        self, asked: dict[Slot, Envelope[EmbeddingRequested]], ahead: Ahead | None
    ) -> dict[Slot, Envelope[EmbeddingComputed]]:
        """The answers to the requests, from the model call started ahead; none when the model
        call fails."""
        if not asked:
            _drop(ahead)
            return {}
        texts = list(
            dict.fromkeys(item.text for event in asked.values() for item in event.payload.items)
        )
        try:
            provenance, vectors = await self._vectors(texts, ahead)
        except Exception as exc:
            log.warning(
                "inline embedding failed; the embedding service answers instead",
                extra={"requests": len(asked), "error_type": type(exc).__name__},
            )
            return {}
        made_by = VectorProvenance(**provenance.model_dump())
        answers: dict[Slot, Envelope[EmbeddingComputed]] = {}
        for slot, event in asked.items():
            request = event.payload
            items = [
                EmbeddedItem(item_id=item.item_id, vector=vectors[item.text].tolist())
                for item in request.items
            ]
            computed = EmbeddingComputed(
                request_id=request.request_id,
                requester=request.requester,
                purpose=request.purpose,
                items=items,
                provenance=made_by,
            )
            answers[slot] = new_event(
                EMBEDDING_COMPUTED,
                computed,
                tenant_id=event.tenant_id,
                caused_by=event,
                event_id=derive_event_id(event.event_id, "computed"),
            )
        return answers

    async def _vectors(
        self, texts: list[str], ahead: Ahead | None
    ) -> tuple[Provenance, dict[str, np.ndarray]]:
        """Each text's vector and the embedder's provenance: from the call made ahead when it
        covered them all (it always does unless a request's text is not its write's content),
        else from one call for them all."""
        if ahead is not None:
            early = await ahead.call
            vectors = dict(zip(ahead.texts, early.vectors, strict=True))
            if all(text in vectors for text in texts):
                return early.provenance, vectors
        late = await self.embedder().embed(texts)
        return late.provenance, dict(zip(texts, late.vectors, strict=True))


@dataclass(frozen=True)
class Ahead:
    """A model call started before the rows were opened, and the texts it embeds."""

    texts: list[str]
    call: asyncio.Future[Embeddings]


def _drop(ahead: Ahead | None) -> None:
    """Give up a call made ahead whose vectors are not needed (its failure included)."""
    if ahead is None:
        return
    if not ahead.call.done():
        ahead.call.cancel()
    elif not ahead.call.cancelled():
        ahead.call.exception()
