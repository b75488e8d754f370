"""The VectorStore port: cosine and hybrid (dense + lexical) search over collections tied to one
embedder fingerprint and, for hybrid search, one lexical encoder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

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


@runtime_checkable
class VectorStore(Protocol):
    """What services rely on; every adapter passes the same contract tests."""

    async def ensure_collection(
        self, name: str, dimension: int, fingerprint: str, *, lexical: str | None = None
    ) -> None:
        """Create the collection, or check an existing one has this dimension, fingerprint and
        lexical encoder (LexicalMismatch otherwise, None and a value included)."""
        ...

    async def collection_fingerprint(self, name: str) -> str:
        """The embedder fingerprint stored with the collection."""
        ...

    async def collection_info(self, name: str) -> CollectionInfo:
        """The collection's dimension, embedder fingerprint and lexical encoder id."""
        ...

    async def upsert(
        self, name: str, points: Sequence[Point], *, fingerprint: str | None = None
    ) -> None:
        """Insert or replace points by id; with `fingerprint`, refuse a foreign vector space.
        A point's `sparse` is its lexical vector, refused on a collection without them."""
        ...

    async def set_payload(self, name: str, ids: Sequence[str], fields: Payload) -> None:
        """Merge fields into existing points' payloads without rewriting vectors; unknown ids are
        ignored."""
        ...

    async def delete(self, name: str, ids: Sequence[str]) -> None:
        """Remove points by id; unknown ids are ignored."""
        ...

    async def delete_by_filter(self, name: str, filter: PayloadFilter) -> None:
        """Remove every point matching a non-empty filter (the same filter count() takes)."""
        ...

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
        """Nearest points by cosine similarity, best first, never below `score_threshold`."""
        ...

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
        """Dense and lexical top-`limit` among points matching `filter`, each hit with both
        scores; IDF over the points matching `idf_filter` (None: the whole collection). Without
        payload, each hit's id is its engine id and its payload empty (see `hit_payloads`)."""
        ...

    async def hit_payloads(self, name: str, hits: Sequence[HybridHit]) -> dict[str, HybridHit]:
        """Hits of a search made without payloads, by the engine id each came with, with their
        ids and payloads read; hits whose point is gone since are left out."""
        ...

    async def count(self, name: str, filter: PayloadFilter | None = None) -> int:
        """Exact number of points matching the filter."""
        ...

    async def scroll(
        self, name: str, filter: PayloadFilter | None = None, *, limit: int
    ) -> list[Listed]:
        """Up to `limit` points matching the filter, ids and payloads only; no cursor, so a
        caller that changes what the filter matches (a backfill) asks again until none are left."""
        ...

    async def get(self, name: str, ids: Sequence[str]) -> list[Point]:
        """Stored points (unit dense vector, payload, lexical vector if any) in the order asked
        for; missing ids are left out."""
        ...

    async def close(self) -> None:
        """Flush and release the engine."""
        ...
