"""Spans and a latency histogram around any VectorStore: names and counts, never vectors or payloads."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence, Sized
from contextlib import contextmanager
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from engram_vectors.models import (
    CollectionInfo,
    Hit,
    HybridHit,
    Listed,
    Payload,
    PayloadFilter,
    Point,
    SparseVector,
    VectorLike,
)
from engram_vectors.port import VectorStore

VECTOR_QUERY_DURATION = "engram.vector.query.duration"
BATCH = "db.operation.batch.size"
FILTER_FIELDS = "db.query.filter.fields"
TOP_K = "db.vector.query.top_k"
SPARSE_TERMS = "engram.vector.query.sparse_terms"
IDF_FILTER_FIELDS = "engram.vector.query.idf_filter.fields"
RETURNED = "db.response.returned_rows"
_SECONDS_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)


class InstrumentedVectorStore:
    """Wraps one adapter so every port call is a client span and a duration point."""

    def __init__(
        self,
        inner: VectorStore,
        *,
        system: str = "qdrant",
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self.inner = inner
        self.system = system
        self._tracer = (tracer_provider or trace.get_tracer_provider()).get_tracer("engram.vectors")
        meter = (meter_provider or metrics.get_meter_provider()).get_meter("engram.vectors")
        self._duration = meter.create_histogram(
            VECTOR_QUERY_DURATION,
            unit="s",
            description="one vector-store call, by operation and collection",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS,
        )

    def __getattr__(self, name: str) -> Any:
        """Adapter extras (optimize, collection_dimension) pass through untraced."""
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @contextmanager
    def _observe(
        self, operation: str, collection: str, counts: Mapping[str, int] | None = None
    ) -> Iterator[Span]:
        """One span and one duration point; errors are named by type, never by message."""
        attributes: dict[str, str | int] = {
            "db.system": self.system,
            "db.system.name": self.system,
            "db.operation.name": operation,
            "db.collection.name": collection,
            **(counts or {}),
        }
        labels = {"db.system.name": self.system, "operation": operation, "collection": collection}
        started = time.perf_counter()
        with self._tracer.start_as_current_span(
            f"{operation} {collection}",
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield span
            except BaseException as exc:
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(Status(StatusCode.ERROR))
                labels["error.type"] = type(exc).__name__
                raise
            finally:
                self._duration.record(time.perf_counter() - started, labels)

    async def ensure_collection(
        self, name: str, dimension: int, fingerprint: str, *, lexical: str | None = None
    ) -> None:
        """Create or check the collection (traced)."""
        with self._observe("ensure_collection", name):
            await self.inner.ensure_collection(name, dimension, fingerprint, lexical=lexical)

    async def collection_fingerprint(self, name: str) -> str:
        """The stored embedder fingerprint (traced)."""
        with self._observe("collection_fingerprint", name):
            return await self.inner.collection_fingerprint(name)

    async def collection_info(self, name: str) -> CollectionInfo:
        """The stored dimension, fingerprint and lexical encoder (traced)."""
        with self._observe("collection_info", name):
            return await self.inner.collection_info(name)

    async def upsert(
        self, name: str, points: Sequence[Point], *, fingerprint: str | None = None
    ) -> None:
        """Insert or replace points (traced with the point count)."""
        with self._observe("upsert", name, {BATCH: len(points)}):
            await self.inner.upsert(name, points, fingerprint=fingerprint)

    async def set_payload(self, name: str, ids: Sequence[str], fields: Payload) -> None:
        """Merge payload fields (traced with the id count)."""
        with self._observe("set_payload", name, {BATCH: len(ids)}):
            await self.inner.set_payload(name, ids, fields)

    async def delete(self, name: str, ids: Sequence[str]) -> None:
        """Remove points by id (traced with the id count)."""
        with self._observe("delete", name, {BATCH: len(ids)}):
            await self.inner.delete(name, ids)

    async def delete_by_filter(self, name: str, filter: PayloadFilter) -> None:
        """Remove matching points (traced with the number of filter fields)."""
        with self._observe("delete_by_filter", name, {FILTER_FIELDS: len(filter)}):
            await self.inner.delete_by_filter(name, filter)

    async def search(
        self,
        name: str,
        vector: VectorLike,
        top_k: int,
        filter: PayloadFilter | None = None,
        score_threshold: float | None = None,
        *,
        fingerprint: str | None = None,
    ) -> list[Hit]:
        """Nearest points (traced with top_k, filter field count and the number of hits)."""
        counts = {TOP_K: top_k, FILTER_FIELDS: len(filter or {})}
        with self._observe("search", name, counts) as span:
            hits = await self.inner.search(
                name, vector, top_k, filter, score_threshold, fingerprint=fingerprint
            )
            span.set_attribute(RETURNED, len(hits))
            return hits

    async def hybrid_search(
        self,
        name: str,
        *,
        vector: VectorLike,
        sparse: SparseVector | None,
        limit: int,
        filter: PayloadFilter | None = None,
        fingerprint: str | None = None,
        idf_filter: PayloadFilter | None = None,
        with_payload: bool = True,
    ) -> list[HybridHit]:
        """Hybrid candidates (traced with the limit, filter field counts, the number of query
        terms when there is a lexical query, and the number of hits)."""
        counts = {
            TOP_K: limit,
            FILTER_FIELDS: len(filter or {}),
            IDF_FILTER_FIELDS: len(idf_filter or {}),
        }
        if isinstance(sparse, SparseVector) and isinstance(sparse.indices, Sized):
            counts[SPARSE_TERMS] = len(sparse.indices)
        with self._observe("hybrid_search", name, counts) as span:
            hits = await self.inner.hybrid_search(
                name,
                vector=vector,
                sparse=sparse,
                limit=limit,
                filter=filter,
                fingerprint=fingerprint,
                idf_filter=idf_filter,
                with_payload=with_payload,
            )
            span.set_attribute(RETURNED, len(hits))
            return hits

    async def hit_payloads(self, name: str, hits: Sequence[HybridHit]) -> dict[str, HybridHit]:
        """The payloads of hits found without them (traced with how many were asked for)."""
        with self._observe("hit_payloads", name, {TOP_K: len(hits)}) as span:
            found = await self.inner.hit_payloads(name, hits)
            span.set_attribute(RETURNED, len(found))
            return found

    async def count(self, name: str, filter: PayloadFilter | None = None) -> int:
        """Exact count (traced with the count)."""
        with self._observe("count", name, {FILTER_FIELDS: len(filter or {})}) as span:
            total = await self.inner.count(name, filter)
            span.set_attribute(RETURNED, total)
            return total

    async def scroll(
        self, name: str, filter: PayloadFilter | None = None, *, limit: int
    ) -> list[Listed]:
        """Matching ids and payloads (traced with the limit, filter field count and found)."""
        counts = {TOP_K: limit, FILTER_FIELDS: len(filter or {})}
        with self._observe("scroll", name, counts) as span:
            found = await self.inner.scroll(name, filter, limit=limit)
            span.set_attribute(RETURNED, len(found))
            return found

    async def get(self, name: str, ids: Sequence[str]) -> list[Point]:
        """Stored points by id (traced with the asked and found counts)."""
        with self._observe("get", name, {BATCH: len(ids)}) as span:
            found = await self.inner.get(name, ids)
            span.set_attribute(RETURNED, len(found))
            return found

    async def close(self) -> None:
        """Flush and release the engine (not traced: shutdown happens outside any request)."""
        await self.inner.close()
