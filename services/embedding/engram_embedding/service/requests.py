"""Answering embedding requests: one request in, one `embedding.computed` out (vectors and the
embedder's provenance), its texts embedded in batches with other requests' and read ahead."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import deque
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np

from engram_embedders import Embedder, Embeddings
from engram_embedding.domain.model_calls import model_calls
from engram_embedding.domain.validation import screen
from engram_embedding.service.model_turns import ModelTurns
from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import BULK_TYPES, EMBEDDING_COMPUTED, in_lane_of
from engram_events.payloads.embeddings import (
    EmbeddedItem,
    EmbeddingComputed,
    EmbeddingRequested,
    VectorProvenance,
)
from engram_platform.metrics import PipelineMetrics

log = logging.getLogger(__name__)
KEPT_FETCHES = 2
"""Fetches per lane whose queued batches are kept: the one being answered and the one read
ahead."""


def in_bulk_lane(events: Sequence[Envelope[EmbeddingRequested]]) -> bool:
    """Whether these requests came by the bulk lane (a fetch holds one lane's only)."""
    return bool(events) and events[0].event_type in BULK_TYPES


def vector_provenance(embeddings: Embeddings | None, embedder: Embedder) -> VectorProvenance:
    """The provenance the embedder returned with the vectors (its own, never configuration)."""
    source = embeddings.provenance if embeddings is not None else embedder.provenance
    return VectorProvenance(**source.model_dump())


class EmbeddingRequests:
    """Embeds requested texts in batches; results of a prefetched batch are reused per event."""

    def __init__(
        self,
        embedder: Embedder,
        batch_size: int,
        metrics: PipelineMetrics | None = None,
        *,
        bulk_call_chars: int | None = None,
        bulk_embedder: Embedder | None = None,
    ) -> None:
        self.embedder = embedder
        self.bulk_embedder = bulk_embedder
        """The bulk lane's own model (same files, lower CPU priority), or None to share
        `embedder` with the interactive lane, taking turns."""
        self.batch_size = batch_size
        self.bulk_call_chars = bulk_call_chars
        """Characters of text per bulk model call (None: `batch_size` texts only): the longest
        an interactive request waits for the model is one such call."""
        self.metrics = metrics or PipelineMetrics("embedding")
        self._prefetched: dict[str, tuple[np.ndarray[Any, Any], VectorProvenance]] = {}
        self._ahead: dict[str, asyncio.Future[None]] = {}
        self._fetches: dict[bool, deque[set[str]]] = {False: deque(), True: deque()}
        self.turns = ModelTurns()
        self.embed_calls = 0

    async def _embed(self, texts: list[str], *, bulk: bool = False) -> Embeddings:
        """One embedder call when the model is ours (interactive calls first; the bulk lane's
        own model, when it has one, runs beside), counted: texts, batch size and duration per
        model."""
        own = self.bulk_embedder if bulk else None
        async with nullcontext() if own is not None else self.turns.turn(bulk=bulk):
            self.embed_calls += 1
            started = time.perf_counter()
            result = await (own or self.embedder).embed(texts)
        self.metrics.embedded(
            model=result.provenance.model_id,
            batch_size=len(texts),
            seconds=time.perf_counter() - started,
        )
        return result

    async def prefetch(self, events: Sequence[Envelope[EmbeddingRequested]]) -> None:
        """Embed the valid texts of many requests together, in chunks of `batch_size`."""
        wanted = [(e, item) for e in events for item in screen(list(e.payload.items)).accepted]
        bulk = in_bulk_lane(events)
        budget = self.bulk_call_chars if bulk else None
        for chunk in model_calls(wanted, self.batch_size, budget):
            result = await self._embed([item.text for _, item in chunk], bulk=bulk)
            provenance = vector_provenance(result, self.embedder)
            for (event, item), vector in zip(chunk, result.vectors, strict=True):
                self._prefetched[f"{event.event_id}:{item.item_id}"] = (vector, provenance)
        if wanted:
            log.info("embedded batch", extra={"requests": len(events), "texts": len(wanted)})

    def forget(self, events: Sequence[Envelope[EmbeddingRequested]]) -> None:
        """Drop vectors no answer claimed (a request whose answer failed after its batch ran)."""
        self._drop_vectors({str(event.event_id) for event in events})

    def _drop_vectors(self, event_ids: set[str]) -> None:
        """Forget the prefetched vectors of these requests."""
        for key in [k for k in self._prefetched if k[: k.index(":")] in event_ids]:
            del self._prefetched[key]

    def _groups(self, events: Sequence[Envelope[EmbeddingRequested]]) -> list[list[int]]:
        """Consecutive requests whose valid texts fill about one embedder batch each."""
        groups: list[list[int]] = [[]]
        size = 0
        for index, event in enumerate(events):
            texts = len(screen(list(event.payload.items)).accepted)
            if groups[-1] and size + texts > self.batch_size:
                groups.append([])
                size = 0
            groups[-1].append(index)
            size += texts
        return groups

    def prepare(self, events: list[Envelope[EmbeddingRequested]]) -> None:
        """The consumer's look-ahead: every embedder batch of the fetch is queued for the
        embedder now, behind the fetch still being answered, so the model does not wait
        between runs or between fetches. What the same lane's fetch before the previous one
        left unclaimed (it failed, or was dropped) is cancelled and its vectors dropped."""
        fetches = self._fetches[in_bulk_lane(events)]
        if len(fetches) == KEPT_FETCHES:
            newer = set().union(*list(fetches)[1:])
            stale = fetches.popleft() - newer - {str(e.event_id) for e in events}
            for event_id in stale:
                task = self._ahead.pop(event_id, None)
                if task is not None:
                    task.cancel()
            self._drop_vectors(stale)
        fetches.append({str(e.event_id) for e in events})
        self._queue(events)

    def _queue(self, events: Sequence[Envelope[EmbeddingRequested]]) -> None:
        """One embedding task per embedder batch, remembered for each request it covers."""
        for group in self._groups(events):
            task = asyncio.ensure_future(self.prefetch([events[i] for i in group]))
            for i in group:
                self._ahead[str(events[i].event_id)] = task

    async def answer_run(
        self, events: list[Envelope[EmbeddingRequested]]
    ) -> list[list[Envelope[Any]] | BaseException]:
        """A run of requests: those not queued by `prepare` are queued now, every batch at
        once, and each request is answered as soon as its batch is embedded, while the next
        ones embed. A request whose batch or answer fails is returned as its exception (the
        consumer sends it back to the single route)."""
        self._queue([e for e in events if str(e.event_id) not in self._ahead])
        results: list[list[Envelope[Any]] | BaseException] = []
        try:
            for event in events:
                try:
                    await self._ahead.pop(str(event.event_id))
                    results.append(await self.answer(event))
                except Exception as exc:
                    results.append(exc)
            return results
        finally:
            for event in events:
                self._ahead.pop(str(event.event_id), None)
            self.forget(events)

    async def answer(self, event: Envelope[EmbeddingRequested]) -> list[Envelope[Any]]:
        """Vectors for the valid items, `rejected` for the rest, with the embedder's provenance."""
        request = event.payload
        screened = screen(list(request.items))
        keys = [f"{event.event_id}:{item.item_id}" for item in screened.accepted]
        missing = [
            item
            for item, key in zip(screened.accepted, keys, strict=True)
            if key not in self._prefetched
        ]
        if missing:
            await self.prefetch([event])
        found = [self._prefetched.pop(key) for key in keys]
        provenance = found[0][1] if found else vector_provenance(None, self.embedder)
        computed = EmbeddingComputed(
            request_id=request.request_id,
            requester=request.requester,
            purpose=request.purpose,
            items=[
                EmbeddedItem(item_id=item.item_id, vector=vector)
                for item, (vector, _) in zip(screened.accepted, found, strict=True)
            ],
            rejected=screened.rejected,
            provenance=provenance,
            text_sha256=[
                hashlib.sha256(item.text.encode("utf-8")).hexdigest() for item in screened.accepted
            ],
        )
        return [
            new_event(
                in_lane_of(EMBEDDING_COMPUTED, event.event_type),
                computed,
                tenant_id=event.tenant_id,
                caused_by=event,
                event_id=derive_event_id(event.event_id, "computed"),
            )
        ]
