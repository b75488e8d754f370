"""Validation and collection bookkeeping shared by every adapter; engines fill in the rest."""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace

from engram_vectors.checks import (
    PreparedPoint,
    UnitVector,
    check_collection_name,
    check_payload,
    check_threshold,
    check_top_k,
    prepare_points,
    prepare_sparse,
    unit_vector,
)
from engram_vectors.errors import (
    CollectionNotFound,
    DimensionMismatch,
    FingerprintMismatch,
    InvalidFilter,
    InvalidQuery,
    LexicalMismatch,
    VectorStoreError,
)
from engram_vectors.filters import Conditions, parse_filter
from engram_vectors.hybrid import Batch, EngineQuery, HybridPlan
from engram_vectors.ids import check_id, engine_id
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


class BaseVectorStore(ABC):
    """Implements the VectorStore port's checks once; subclasses only talk to their engine."""

    def __init__(self) -> None:
        self._infos: dict[str, CollectionInfo] = {}
        self._closed = False

    @abstractmethod
    async def _read_info(self, name: str) -> CollectionInfo | None:
        """The stored info (a collection stored without a lexical id has none), or None when the
        collection does not exist."""

    @abstractmethod
    async def _create(self, name: str, info: CollectionInfo) -> CollectionInfo:
        """Create the collection and persist its info; return the info now stored (a concurrent
        creator may have won)."""

    @abstractmethod
    async def _upsert(self, name: str, points: list[PreparedPoint]) -> None:
        """Write validated points; returns once they are durable in the engine."""

    @abstractmethod
    async def _set_payload(self, name: str, ids: list[uuid.UUID], fields: Payload) -> None:
        """Merge checked fields into the payloads of those ids that exist; vectors stay as they are."""

    @abstractmethod
    async def _delete_ids(self, name: str, ids: list[uuid.UUID]) -> None:
        """Remove points by engine id."""

    @abstractmethod
    async def _delete_matching(self, name: str, conditions: Conditions) -> None:
        """Remove points matching non-empty conditions."""

    @abstractmethod
    async def _search(
        self,
        name: str,
        vector: UnitVector,
        top_k: int,
        conditions: Conditions,
        score_threshold: float | None,
    ) -> list[Hit]:
        """Nearest points among those matching the conditions."""

    @abstractmethod
    async def _query_batch(self, name: str, queries: list[EngineQuery]) -> Batch:
        """Run dense and lexical queries with their filters inside the engine; one result list
        per query, best first."""

    async def _run_hybrid(self, name: str, plan: HybridPlan) -> list[HybridHit]:
        """Candidates, then their missing scores; an engine may override to run both at once."""
        found = await self._query_batch(name, plan.candidates())
        completions = plan.completions(found)
        completed = await self._query_batch(name, completions) if completions else []
        return plan.hits(found, completed)

    @abstractmethod
    async def _count(self, name: str, conditions: Conditions) -> int:
        """Exact count of matching points."""

    @abstractmethod
    async def _scroll(self, name: str, conditions: Conditions, limit: int) -> list[Listed]:
        """Up to `limit` matching points' caller ids and payloads, in the engine's order."""

    @abstractmethod
    async def _get(self, name: str, ids: list[uuid.UUID]) -> list[Point]:
        """Stored points for these engine ids, in order, missing ones left out, each with its
        lexical vector (indices ascending) when it has one."""

    @abstractmethod
    async def _close(self) -> None:
        """Release the engine."""

    async def _info(self, name: str) -> CollectionInfo:
        """The collection's info from cache or storage; CollectionNotFound if it has none."""
        if self._closed:
            raise VectorStoreError("the vector store is closed")
        check_collection_name(name)
        info = self._infos.get(name)
        if info is None:
            info = await self._read_info(name)
            if info is None:
                raise CollectionNotFound(f"collection {name!r} does not exist")
            self._infos[name] = info
        return info

    @staticmethod
    def _check_fingerprint(name: str, info: CollectionInfo, fingerprint: str | None) -> None:
        """Refuse a caller that declares a vector space other than the collection's."""
        if fingerprint is not None and fingerprint != info.fingerprint:
            raise FingerprintMismatch(name, info.fingerprint, fingerprint)

    async def ensure_collection(
        self, name: str, dimension: int, fingerprint: str, *, lexical: str | None = None
    ) -> None:
        """Create the collection, or check an existing one has this dimension, fingerprint and
        lexical encoder; with `lexical`, it also holds a sparse vector per point."""
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise VectorStoreError("dimension must be a positive integer")
        if not isinstance(fingerprint, str) or not fingerprint:
            raise VectorStoreError("fingerprint must be a non-empty string")
        if lexical is not None and (not isinstance(lexical, str) or not lexical):
            raise VectorStoreError("lexical must be None or a non-empty encoder id")
        try:
            existing = await self._info(name)
        except CollectionNotFound:
            wanted = CollectionInfo(dimension=dimension, fingerprint=fingerprint, lexical=lexical)
            existing = await self._create(name, wanted)
            self._infos[name] = existing
        if existing.dimension != dimension:
            raise DimensionMismatch(name, existing.dimension, dimension)
        self._check_fingerprint(name, existing, fingerprint)
        if existing.lexical != lexical:
            raise LexicalMismatch(name, existing.lexical, lexical)

    async def collection_info(self, name: str) -> CollectionInfo:
        """What the collection promises: dimension, embedder fingerprint, lexical encoder."""
        return await self._info(name)

    async def collection_fingerprint(self, name: str) -> str:
        """The embedder fingerprint stored with the collection."""
        return (await self._info(name)).fingerprint

    async def collection_dimension(self, name: str) -> int:
        """The vector width stored with the collection."""
        return (await self._info(name)).dimension

    async def upsert(
        self, name: str, points: Sequence[Point], *, fingerprint: str | None = None
    ) -> None:
        """Insert or replace points by id; with `fingerprint`, refuse a foreign vector space."""
        info = await self._info(name)
        self._check_fingerprint(name, info, fingerprint)
        prepared = prepare_points(points, info.dimension, name, lexical=info.lexical is not None)
        if prepared:
            await self._upsert(name, prepared)

    async def set_payload(self, name: str, ids: Sequence[str], fields: Payload) -> None:
        """Merge `fields` into the payloads of existing points (a field replaces its whole value),
        without rewriting their vectors; unknown ids are ignored."""
        await self._info(name)
        checked = check_payload(fields)
        engine_ids = list(dict.fromkeys(engine_id(check_id(point_id)) for point_id in ids))
        if engine_ids and checked:
            await self._set_payload(name, engine_ids, checked)

    async def delete(self, name: str, ids: Sequence[str]) -> None:
        """Remove points by id; unknown ids are ignored."""
        await self._info(name)
        engine_ids = list(dict.fromkeys(engine_id(check_id(point_id)) for point_id in ids))
        if engine_ids:
            await self._delete_ids(name, engine_ids)

    async def delete_by_filter(self, name: str, filter: PayloadFilter) -> None:
        """Remove every point matching a non-empty filter; an empty filter is refused."""
        await self._info(name)
        conditions = parse_filter(filter)
        if not conditions:
            raise InvalidFilter("delete_by_filter needs at least one condition")
        await self._delete_matching(name, conditions)

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
        info = await self._info(name)
        self._check_fingerprint(name, info, fingerprint)
        query = unit_vector(vector, info.dimension, name, InvalidQuery)
        conditions = parse_filter(filter)
        threshold = check_threshold(score_threshold)
        hits = await self._search(name, query, check_top_k(top_k), conditions, threshold)
        return [hit for hit in hits if threshold is None or hit.score >= threshold]

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
        """The dense top-`limit` and the lexical top-`limit` among points matching `filter`, each
        with both scores: dense candidates by dense rank, then lexical-only ones by lexical rank.

        IDF statistics cover the points matching `idf_filter` (None: the whole collection), so a
        caller can keep one tenant's vocabulary from weighing another's scores. With `sparse`
        None only dense candidates come back and their lexical scores are None.
        """
        info = await self._info(name)
        self._check_fingerprint(name, info, fingerprint)
        query = unit_vector(vector, info.dimension, name, InvalidQuery)
        lexical = None
        if sparse is not None:
            if info.lexical is None:
                raise InvalidQuery(
                    f"collection {name!r} holds no lexical vectors: pass sparse=None, or ensure "
                    "the collection with a lexical encoder"
                )
            lexical = prepare_sparse(sparse, InvalidQuery)
        plan = HybridPlan(
            vector=query,
            sparse=lexical,
            limit=check_top_k(limit, "limit"),
            conditions=parse_filter(filter),
            idf_conditions=parse_filter(idf_filter),
            with_payload=with_payload,
        )
        return await self._run_hybrid(name, plan)

    async def hit_payloads(self, name: str, hits: Sequence[HybridHit]) -> dict[str, HybridHit]:
        """Hits of a search made without payloads, by the engine id each came with, with their
        caller ids and payloads read in one call; hits whose point is gone since are left out."""
        await self._info(name)
        if not hits:
            return {}
        try:
            engine_ids = [uuid.UUID(hit.id) for hit in hits]
        except ValueError:
            raise InvalidQuery(
                "hit_payloads takes hits of a search made without payloads"
            ) from None
        stored = {engine_id(item.id): item for item in await self._payloads(name, engine_ids)}
        return {
            hit.id: replace(hit, id=item.id, payload=item.payload)
            for hit, key in zip(hits, engine_ids, strict=True)
            if (item := stored.get(key)) is not None
        }

    async def _payloads(self, name: str, ids: list[uuid.UUID]) -> list[Listed]:
        """Caller ids and payloads of these engine ids, missing ones left out; an engine that
        can read payloads without vectors overrides this."""
        return [Listed(id=point.id, payload=point.payload) for point in await self._get(name, ids)]

    async def count(self, name: str, filter: PayloadFilter | None = None) -> int:
        """Exact number of points matching the filter."""
        await self._info(name)
        return await self._count(name, parse_filter(filter))

    async def scroll(
        self, name: str, filter: PayloadFilter | None = None, *, limit: int
    ) -> list[Listed]:
        """Up to `limit` points matching the filter, ids and payloads only (no cursor)."""
        await self._info(name)
        return await self._scroll(name, parse_filter(filter), check_top_k(limit, "limit"))

    async def get(self, name: str, ids: Sequence[str]) -> list[Point]:
        """Stored points (with their lexical vectors) in the order asked for; missing ids are
        left out."""
        await self._info(name)
        engine_ids = list(dict.fromkeys(engine_id(check_id(point_id)) for point_id in ids))
        return await self._get(name, engine_ids) if engine_ids else []

    async def close(self) -> None:
        """Flush and release the engine; later calls raise VectorStoreError."""
        if self._closed:
            return
        self._closed = True
        await self._close()
        self._infos.clear()
