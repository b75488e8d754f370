"""The embedded Qdrant engine (qdrant-edge-py): the local default, one shard per collection.

Layout under `root`: `<collection>/collection.json` (dimension, embedder fingerprint and lexical
encoder id, written before the shard so a crash never leaves a shard without it) and
`<collection>/shard/` (the engine's files: the unnamed dense vector and, for a lexical collection,
the sparse "lexical" vector with the IDF modifier). Only one process may open a shard directory;
a second gets StoreUnavailable.

Payload booleans are stored as reserved tagged strings and read back as booleans, because the
engine cannot match a stored boolean (edge_payload.py). A hybrid search runs its candidate and
completion queries in one hop to the worker thread, so no write lands between them.

Writes go through the engine's write-ahead log, which survives a killed process; a machine crash
can lose the last writes unless `fsync_each_write=True` (about 20 ms per write here).
All engine calls run on one worker thread per store, so the event loop is never blocked and
calls on a shard never interleave. `optimize()` builds HNSW indexes and holds the GIL while it
runs: call it from a maintenance task, never on a request path.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as edge

from engram_vectors.base import BaseVectorStore
from engram_vectors.checks import PreparedPoint, UnitVector, record_vectors, split_payload
from engram_vectors.defaults import (
    DEFAULT_KEYWORD_INDEXES,
    LEXICAL_VECTOR,
    TENANT_KEY,
    UPSERT_CHUNK,
)
from engram_vectors.edge_filters import to_edge_filter
from engram_vectors.edge_payload import decode_payload, encode_payload
from engram_vectors.errors import CollectionNotFound, StoreUnavailable, VectorStoreError
from engram_vectors.filters import Conditions
from engram_vectors.hybrid import Batch, DenseQuery, EngineQuery, HybridPlan, Scored
from engram_vectors.models import CollectionInfo, Hit, HybridHit, Listed, Payload, Point

T = TypeVar("T")

INFO_FILE = "collection.json"
SHARD_DIR = "shard"
INFO_FORMAT = "engram-vectors-collection-v1"


class QdrantEdgeStore(BaseVectorStore):
    """Vector collections as embedded Qdrant shards in directories under `root`."""

    def __init__(
        self,
        root: Path | str,
        *,
        keyword_indexes: Sequence[str] = DEFAULT_KEYWORD_INDEXES,
        search_threads: int | None = 1,
        fsync_each_write: bool = False,
    ) -> None:
        super().__init__()
        self._root = Path(root)
        self._keyword_indexes = tuple(keyword_indexes)
        self._search_threads = search_threads
        self._fsync_each_write = fsync_each_write
        self._shards: dict[str, edge.EdgeShard] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-edge")

    async def _run(self, call: Callable[..., T], *args: Any) -> T:
        """Run an engine call on the store's worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, call, *args)

    def _dir(self, name: str) -> Path:
        return self._root / name

    def _config(self, info: CollectionInfo) -> edge.EdgeConfig:
        """Unnamed cosine vectors of the collection's width and, for a lexical collection, a
        sparse vector with the IDF modifier; on load the engine checks the shard agrees."""
        vectors = edge.EdgeVectorParams(size=info.dimension, distance=edge.Distance.Cosine)
        sparse = {LEXICAL_VECTOR: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf)}
        return edge.EdgeConfig(
            vectors=vectors,
            sparse_vectors=sparse if info.lexical is not None else None,
            max_search_threads=self._search_threads,
        )

    def _read_info_sync(self, name: str) -> CollectionInfo | None:
        path = self._dir(name) / INFO_FILE
        if not path.is_file():
            return None
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("format") != INFO_FORMAT:
            raise VectorStoreError(f"{path} is not an engram collection file")
        return CollectionInfo(
            dimension=int(stored["dimension"]),
            fingerprint=stored["fingerprint"],
            lexical=stored.get("lexical"),
        )

    async def _read_info(self, name: str) -> CollectionInfo | None:
        return await self._run(self._read_info_sync, name)

    def _write_info(self, name: str, info: CollectionInfo) -> None:
        """Write the sidecar atomically: a temp file, fsync, rename."""
        directory = self._dir(name)
        directory.mkdir(parents=True, exist_ok=True)
        body = {
            "format": INFO_FORMAT,
            "dimension": info.dimension,
            "fingerprint": info.fingerprint,
            "lexical": info.lexical,
        }
        temporary = directory / f".{INFO_FILE}.tmp"
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(body, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, directory / INFO_FILE)

    def _create_sync(self, name: str, info: CollectionInfo) -> CollectionInfo:
        stored = self._read_info_sync(name)
        if stored is None:
            self._write_info(name, info)
            stored = info
        self._shard_sync(name)
        return stored

    async def _create(self, name: str, info: CollectionInfo) -> CollectionInfo:
        return await self._run(self._create_sync, name, info)

    def _create_indexes(self, shard: edge.EdgeShard) -> None:
        """Keyword payload indexes; the tenant key is marked as the tenant for co-location."""
        existing = shard.info().payload_schema
        for key in self._keyword_indexes:
            if key not in existing:
                schema = edge.KeywordIndexParams(is_tenant=key == TENANT_KEY)
                shard.update(edge.UpdateOperation.create_field_index(key, schema))

    def _shard_sync(self, name: str) -> edge.EdgeShard:
        """The open shard, opening it (or creating it, after its sidecar) on first use."""
        shard = self._shards.get(name)
        if shard is not None:
            return shard
        path = self._dir(name) / SHARD_DIR
        info = self._read_info_sync(name)
        if info is None:
            raise CollectionNotFound(f"collection {name!r} has no {INFO_FILE}")
        try:
            if (path / "edge_config.json").is_file():
                shard = edge.EdgeShard.load(str(path), self._config(info))
            else:
                shard = edge.EdgeShard.create(str(path), self._config(info))
        except Exception as failure:
            raise StoreUnavailable(
                f"cannot open the shard of {name!r} (is another process using it?): {failure}"
            ) from failure
        self._create_indexes(shard)
        self._shards[name] = shard
        return shard

    def _write(self, name: str, operation: edge.UpdateOperation) -> None:
        shard = self._shard_sync(name)
        shard.update(operation)
        if self._fsync_each_write:
            shard.flush()

    @staticmethod
    def _engine_point(point: PreparedPoint) -> edge.Point:
        """The dense vector unnamed, the lexical one (if any) named, booleans as tokens."""
        payload = encode_payload(point.payload)
        if point.sparse is None:
            return edge.Point(point.engine_id, point.vector.tolist(), payload)
        sparse = edge.SparseVector(point.sparse.indices.tolist(), point.sparse.values.tolist())
        vectors = {"": point.vector.tolist(), LEXICAL_VECTOR: sparse}
        return edge.Point(point.engine_id, vectors, payload)

    def _upsert_sync(self, name: str, points: list[PreparedPoint]) -> None:
        for start in range(0, len(points), UPSERT_CHUNK):
            chunk = points[start : start + UPSERT_CHUNK]
            engine_points = [self._engine_point(point) for point in chunk]
            self._write(name, edge.UpdateOperation.upsert_points(engine_points))

    async def _upsert(self, name: str, points: list[PreparedPoint]) -> None:
        await self._run(self._upsert_sync, name, points)

    async def _set_payload(self, name: str, ids: list[uuid.UUID], fields: Payload) -> None:
        """By a HasId filter, since the engine refuses a plain id list naming a missing point."""
        existing = edge.Filter(must=[edge.HasIdCondition(set(ids))])
        operation = edge.UpdateOperation.set_payload_by_filter(existing, encode_payload(fields))
        await self._run(self._write, name, operation)

    async def _delete_ids(self, name: str, ids: list[uuid.UUID]) -> None:
        operation = edge.UpdateOperation.delete_points(list(ids))
        await self._run(self._write, name, operation)

    async def _delete_matching(self, name: str, conditions: Conditions) -> None:
        engine_filter = to_edge_filter(conditions)
        assert engine_filter is not None
        operation = edge.UpdateOperation.delete_points_by_filter(engine_filter)
        await self._run(self._write, name, operation)

    def _search_sync(
        self,
        name: str,
        vector: UnitVector,
        top_k: int,
        conditions: Conditions,
        score_threshold: float | None,
    ) -> list[Hit]:
        request = edge.QueryRequest(
            limit=top_k,
            query=edge.Query.Nearest(vector.tolist()),
            filter=to_edge_filter(conditions),
            score_threshold=score_threshold,
            with_payload=True,
            with_vector=False,
        )
        hits = []
        for scored in self._shard_sync(name).query(request):
            original, payload = split_payload(decode_payload(scored.payload), str(scored.id))
            hits.append(Hit(id=original, score=float(scored.score), payload=payload))
        return hits

    async def _search(
        self,
        name: str,
        vector: UnitVector,
        top_k: int,
        conditions: Conditions,
        score_threshold: float | None,
    ) -> list[Hit]:
        return await self._run(self._search_sync, name, vector, top_k, conditions, score_threshold)

    @staticmethod
    def _request(query: EngineQuery) -> edge.QueryRequest:
        """One engine query; a query limited to ids scores exactly those (HasId, exact search).

        The IDF corpus is always a filter, the empty one for the whole collection: the engine's
        global statistics are read from its sparse index, which goes on counting deleted and
        replaced vectors until segments are optimized, while a corpus counts the live points.
        """
        scope = to_edge_filter(query.conditions)
        if query.ids is not None:
            must: list[Any] = [edge.HasIdCondition(set(query.ids))]
            scope = edge.Filter(must=must + ([scope] if scope is not None else []))
        if isinstance(query, DenseQuery):
            return edge.QueryRequest(
                limit=query.limit,
                query=edge.Query.Nearest(query.vector.tolist()),
                filter=scope,
                params=edge.SearchParams(exact=True) if query.ids is not None else None,
                with_payload=query.with_payload,
                with_vector=False,
            )
        terms = edge.SparseVector(query.sparse.indices.tolist(), query.sparse.values.tolist())
        corpus = to_edge_filter(query.idf_conditions) or edge.Filter()
        return edge.QueryRequest(
            limit=query.limit,
            query=edge.Query.Nearest(terms, using=LEXICAL_VECTOR),
            filter=scope,
            params=edge.SearchParams(idf=edge.IdfParams(corpus=corpus)),
            with_payload=query.with_payload,
            with_vector=False,
        )

    def _query_batch_sync(self, name: str, queries: list[EngineQuery]) -> Batch:
        requests = edge.QueryBatchRequest([self._request(query) for query in queries])
        return [
            [
                Scored(_uuid(point.id), float(point.score), decode_payload(point.payload))
                for point in results
            ]
            for results in self._shard_sync(name).query_batch(requests)
        ]

    async def _query_batch(self, name: str, queries: list[EngineQuery]) -> Batch:
        return await self._run(self._query_batch_sync, name, queries)

    def _run_hybrid_sync(self, name: str, plan: HybridPlan) -> list[HybridHit]:
        return plan.run(lambda queries: self._query_batch_sync(name, queries))

    async def _run_hybrid(self, name: str, plan: HybridPlan) -> list[HybridHit]:
        """Every step in one hop to the worker thread, so no write lands between them; the two
        lexical queries share a batch, whose IDF statistics the engine counts once."""
        return await self._run(self._run_hybrid_sync, name, plan)

    def _count_sync(self, name: str, conditions: Conditions) -> int:
        request = edge.CountRequest(exact=True, filter=to_edge_filter(conditions))
        return self._shard_sync(name).count(request)

    async def _count(self, name: str, conditions: Conditions) -> int:
        return await self._run(self._count_sync, name, conditions)

    def _scroll_sync(self, name: str, conditions: Conditions, limit: int) -> list[Listed]:
        request = edge.ScrollRequest(
            limit=limit, filter=to_edge_filter(conditions), with_payload=True, with_vector=False
        )
        records, _ = self._shard_sync(name).scroll(request)
        found = []
        for record in records:
            original, payload = split_payload(decode_payload(record.payload), str(record.id))
            found.append(Listed(id=original, payload=payload))
        return found

    async def _scroll(self, name: str, conditions: Conditions, limit: int) -> list[Listed]:
        return await self._run(self._scroll_sync, name, conditions, limit)

    def _get_sync(self, name: str, ids: list[uuid.UUID]) -> list[Point]:
        records = {
            record.id: record for record in self._shard_sync(name).retrieve(list(ids), True, True)
        }
        found = []
        for point_id in ids:
            record = records.get(point_id)
            if record is not None:
                original, payload = split_payload(decode_payload(record.payload), str(point_id))
                dense, sparse = record_vectors(record.vector)
                found.append(Point(id=original, vector=dense, payload=payload, sparse=sparse))
        return found

    async def _get(self, name: str, ids: list[uuid.UUID]) -> list[Point]:
        return await self._run(self._get_sync, name, ids)

    def _payloads_sync(self, name: str, ids: list[uuid.UUID]) -> list[Listed]:
        found = []
        for record in self._shard_sync(name).retrieve(list(ids), True, False):
            original, payload = split_payload(decode_payload(record.payload), str(record.id))
            found.append(Listed(id=original, payload=payload))
        return found

    async def _payloads(self, name: str, ids: list[uuid.UUID]) -> list[Listed]:
        """Payloads without vectors (a recall's kept hits need no vectors)."""
        return await self._run(self._payloads_sync, name, ids)

    def _optimize_sync(self, name: str) -> bool:
        return self._shard_sync(name).optimize()

    async def optimize(self, name: str) -> bool:
        """Merge segments and build indexes; holds the GIL, so only for background maintenance."""
        await self._info(name)
        return await self._run(self._optimize_sync, name)

    def _close_sync(self) -> None:
        shards, self._shards = self._shards, {}
        for shard in shards.values():
            shard.flush()
            shard.close()

    async def _close(self) -> None:
        await self._run(self._close_sync)
        self._executor.shutdown(wait=True)


def _uuid(point_id: Any) -> uuid.UUID:
    """The engine id as a UUID (the engine returns UUIDs for UUID ids; be lenient with strings)."""
    return point_id if isinstance(point_id, uuid.UUID) else uuid.UUID(str(point_id))
