"""qdrant-client adapter: a Qdrant server (`url`), or the client's local mode (`:memory:`/path).

The collection's dimension, embedder fingerprint and lexical encoder live in Qdrant's metadata
(server 1.16 or newer; older servers drop it, which `ensure_collection` detects and refuses).
A lexical collection also holds a sparse "lexical" vector with the IDF modifier beside the unnamed
dense one. Payload booleans are stored and matched natively (checked in local mode).
Local mode is a pure-Python engine that blocks the event loop and is slow past a few thousand
points: fine for tests, not for serving.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from pydantic import SecretStr
from qdrant_client import AsyncQdrantClient
from qdrant_client.http import models

from engram_vectors.base import BaseVectorStore
from engram_vectors.checks import PreparedPoint, UnitVector, record_vectors, split_payload
from engram_vectors.client_filters import to_client_filter
from engram_vectors.defaults import (
    DEFAULT_KEYWORD_INDEXES,
    LEXICAL_VECTOR,
    TENANT_KEY,
    UPSERT_CHUNK,
)
from engram_vectors.errors import VectorStoreError
from engram_vectors.filters import Conditions
from engram_vectors.hybrid import Batch, DenseQuery, EngineQuery, Scored
from engram_vectors.models import CollectionInfo, Hit, Listed, Payload, Point

METADATA_FORMAT_KEY = "engram_format"
METADATA_DIMENSION_KEY = "engram_dimension"
METADATA_FINGERPRINT_KEY = "engram_fingerprint"
METADATA_LEXICAL_KEY = "engram_lexical"
METADATA_FORMAT = "engram-vectors-collection-v1"


class QdrantClientStore(BaseVectorStore):
    """Collections in a Qdrant server or in qdrant-client's local mode."""

    def __init__(
        self,
        *,
        url: str | None = None,
        location: str | None = None,
        path: str | None = None,
        api_key: SecretStr | None = None,
        timeout_seconds: int = 10,
        keyword_indexes: Sequence[str] = DEFAULT_KEYWORD_INDEXES,
    ) -> None:
        super().__init__()
        chosen = [option for option in (url, location, path) if option is not None]
        if len(chosen) != 1:
            raise ValueError("give exactly one of url (server), location (':memory:') or path")
        self._server = url is not None
        self._keyword_indexes = tuple(keyword_indexes)
        options: dict[str, Any] = {"url": url, "location": location, "path": path}
        if url is not None:
            options["timeout"] = timeout_seconds
            if api_key is not None:
                options["api_key"] = api_key.get_secret_value()
        self._client = AsyncQdrantClient(**{k: v for k, v in options.items() if v is not None})

    async def _read_info(self, name: str) -> CollectionInfo | None:
        if not await self._client.collection_exists(name):
            return None
        described = await self._client.get_collection(name)
        metadata = described.config.metadata or {}
        if metadata.get(METADATA_FORMAT_KEY) != METADATA_FORMAT:
            raise VectorStoreError(
                f"collection {name!r} has no engram metadata (created elsewhere, or the server "
                "predates collection metadata)"
            )
        lexical = metadata.get(METADATA_LEXICAL_KEY)
        if self._server:
            await self._add_missing_indexes(name, set(described.payload_schema or {}))
        return CollectionInfo(
            dimension=int(metadata[METADATA_DIMENSION_KEY]),
            fingerprint=str(metadata[METADATA_FINGERPRINT_KEY]),
            lexical=None if lexical is None else str(lexical),
        )

    async def _add_missing_indexes(self, name: str, existing: set[str]) -> None:
        """The keyword indexes the service declares that the collection lacks: on creation all
        of them, and on opening one created before a key was declared, the new ones."""
        for key in self._keyword_indexes:
            if key not in existing:
                schema = models.KeywordIndexParams(
                    type=models.KeywordIndexType.KEYWORD, is_tenant=key == TENANT_KEY
                )
                await self._client.create_payload_index(name, key, field_schema=schema, wait=True)

    async def _create(self, name: str, info: CollectionInfo) -> CollectionInfo:
        metadata: dict[str, Any] = {
            METADATA_FORMAT_KEY: METADATA_FORMAT,
            METADATA_DIMENSION_KEY: info.dimension,
            METADATA_FINGERPRINT_KEY: info.fingerprint,
        }
        sparse = None
        if info.lexical is not None:
            metadata[METADATA_LEXICAL_KEY] = info.lexical
            sparse = {LEXICAL_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)}
        try:
            await self._client.create_collection(
                name,
                vectors_config=models.VectorParams(
                    size=info.dimension, distance=models.Distance.COSINE
                ),
                sparse_vectors_config=sparse,
                metadata=metadata,
            )
        except Exception:
            if not await self._client.collection_exists(name):
                raise
        stored = await self._read_info(name)
        if stored is None:
            raise VectorStoreError(f"collection {name!r} vanished while being created")
        return stored

    async def _upsert(self, name: str, points: list[PreparedPoint]) -> None:
        for start in range(0, len(points), UPSERT_CHUNK):
            chunk = points[start : start + UPSERT_CHUNK]
            structs = [
                models.PointStruct(
                    id=str(point.engine_id), vector=_vector(point), payload=point.payload
                )
                for point in chunk
            ]
            await self._client.upsert(name, points=structs, wait=True)

    async def _set_payload(self, name: str, ids: list[uuid.UUID], fields: Payload) -> None:
        """By a HasId filter, since the engine refuses a plain id list naming a missing point."""
        existing = models.Filter(must=[models.HasIdCondition(has_id=[str(i) for i in ids])])
        selector = models.FilterSelector(filter=existing)
        await self._client.set_payload(name, payload=fields, points=selector, wait=True)

    async def _delete_ids(self, name: str, ids: list[uuid.UUID]) -> None:
        selector = models.PointIdsList(points=[str(point_id) for point_id in ids])
        await self._client.delete(name, points_selector=selector, wait=True)

    async def _delete_matching(self, name: str, conditions: Conditions) -> None:
        query_filter = to_client_filter(conditions)
        assert query_filter is not None
        selector = models.FilterSelector(filter=query_filter)
        await self._client.delete(name, points_selector=selector, wait=True)

    async def _search(
        self,
        name: str,
        vector: UnitVector,
        top_k: int,
        conditions: Conditions,
        score_threshold: float | None,
    ) -> list[Hit]:
        response = await self._client.query_points(
            name,
            query=vector.tolist(),
            query_filter=to_client_filter(conditions),
            limit=top_k,
            score_threshold=score_threshold,
            with_payload=True,
            with_vectors=False,
        )
        hits = []
        for scored in response.points:
            original, payload = split_payload(scored.payload, str(scored.id))
            hits.append(Hit(id=original, score=float(scored.score), payload=payload))
        return hits

    def _request(self, query: EngineQuery) -> models.QueryRequest:
        """One query; one limited to ids scores exactly those (HasId; exact search on a server,
        local mode being exact already and warning about search params it ignores).

        The IDF corpus is always a filter, the empty one for the whole collection: a server's
        global statistics come from its sparse index, which goes on counting deleted and replaced
        vectors until segments are optimized, while a corpus counts the live points.
        """
        scope = to_client_filter(query.conditions)
        if query.ids is not None:
            has_id = models.HasIdCondition(has_id=[str(point_id) for point_id in query.ids])
            scope = models.Filter(must=[has_id, *([scope] if scope is not None else [])])
        if isinstance(query, DenseQuery):
            exact = self._server and query.ids is not None
            return models.QueryRequest(
                query=query.vector.tolist(),
                filter=scope,
                limit=query.limit,
                params=models.SearchParams(exact=True) if exact else None,
                with_payload=query.with_payload,
                with_vector=False,
            )
        terms = models.SparseVector(
            indices=query.sparse.indices.tolist(), values=query.sparse.values.tolist()
        )
        corpus = to_client_filter(query.idf_conditions) or models.Filter()
        return models.QueryRequest(
            query=terms,
            using=LEXICAL_VECTOR,
            filter=scope,
            limit=query.limit,
            params=models.SearchParams(idf=models.IdfCorpusParams(corpus=corpus)),
            with_payload=query.with_payload,
            with_vector=False,
        )

    async def _query_batch(self, name: str, queries: list[EngineQuery]) -> Batch:
        responses = await self._client.query_batch_points(
            name, [self._request(query) for query in queries]
        )
        return [
            [
                Scored(uuid.UUID(str(point.id)), float(point.score), dict(point.payload or {}))
                for point in response.points
            ]
            for response in responses
        ]

    async def _count(self, name: str, conditions: Conditions) -> int:
        result = await self._client.count(
            name, count_filter=to_client_filter(conditions), exact=True
        )
        return int(result.count)

    async def _scroll(self, name: str, conditions: Conditions, limit: int) -> list[Listed]:
        records, _ = await self._client.scroll(
            name,
            scroll_filter=to_client_filter(conditions),
            limit=limit,
            with_payload=True,
            with_vectors=False,
        )
        found = []
        for record in records:
            original, payload = split_payload(record.payload, str(record.id))
            found.append(Listed(id=original, payload=payload))
        return found

    async def _get(self, name: str, ids: list[uuid.UUID]) -> list[Point]:
        records = await self._client.retrieve(
            name, [str(point_id) for point_id in ids], with_payload=True, with_vectors=True
        )
        by_id = {str(record.id): record for record in records}
        found = []
        for point_id in ids:
            record = by_id.get(str(point_id))
            if record is not None:
                original, payload = split_payload(record.payload, str(point_id))
                dense, sparse = record_vectors(record.vector)
                found.append(Point(id=original, vector=dense, payload=payload, sparse=sparse))
        return found

    async def _close(self) -> None:
        await self._client.close()


def _vector(point: PreparedPoint) -> models.VectorStruct:
    """The dense vector unnamed, the lexical one (if any) named."""
    dense: list[float] = point.vector.tolist()
    if point.sparse is None:
        return dense
    sparse = models.SparseVector(
        indices=point.sparse.indices.tolist(), values=point.sparse.values.tolist()
    )
    return {"": dense, LEXICAL_VECTOR: sparse}
