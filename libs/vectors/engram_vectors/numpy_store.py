"""Exact in-memory cosine and lexical search: the benchmark baseline and a third contract target.

Lexical scores follow Qdrant's IDF modifier exactly: idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))
with N the points of the IDF population that have a lexical vector and n_t those holding term t;
a point's score is the sum over shared terms of query weight * point weight * idf(t).
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field, replace

import numpy as np

from engram_vectors.base import BaseVectorStore
from engram_vectors.checks import PreparedPoint, PreparedSparse, UnitVector, split_payload
from engram_vectors.filters import Conditions, payload_matches
from engram_vectors.hybrid import Batch, DenseQuery, EngineQuery, LexicalQuery, Scored
from engram_vectors.models import CollectionInfo, Hit, Listed, Payload, Point


@dataclass
class _Collection:
    """Points by engine id plus a lazily rebuilt matrix of their vectors."""

    info: CollectionInfo
    points: dict[uuid.UUID, PreparedPoint] = field(default_factory=dict)
    _order: list[uuid.UUID] | None = None
    _matrix: UnitVector | None = None

    def invalidate(self) -> None:
        """Forget the matrix after a write."""
        self._order = None
        self._matrix = None

    def matrix(self) -> tuple[list[uuid.UUID], UnitVector]:
        """Engine ids and the stacked unit vectors, in the same order."""
        if self._order is None or self._matrix is None:
            self._order = list(self.points)
            rows = [self.points[point_id].vector for point_id in self._order]
            width = self.info.dimension
            self._matrix = np.vstack(rows) if rows else np.empty((0, width), dtype=np.float32)
        return self._order, self._matrix


class ExactNumpyStore(BaseVectorStore):
    """Brute-force cosine over unit vectors held in process memory; nothing is persisted."""

    def __init__(self) -> None:
        super().__init__()
        self._collections: dict[str, _Collection] = {}

    async def _read_info(self, name: str) -> CollectionInfo | None:
        collection = self._collections.get(name)
        return collection.info if collection is not None else None

    async def _create(self, name: str, info: CollectionInfo) -> CollectionInfo:
        return self._collections.setdefault(name, _Collection(info=info)).info

    async def _upsert(self, name: str, points: list[PreparedPoint]) -> None:
        collection = self._collections[name]
        for point in points:
            collection.points[point.engine_id] = point
        collection.invalidate()

    async def _set_payload(self, name: str, ids: list[uuid.UUID], fields: Payload) -> None:
        points = self._collections[name].points
        for point_id in ids:
            point = points.get(point_id)
            if point is not None:
                points[point_id] = replace(point, payload={**point.payload, **fields})

    async def _delete_ids(self, name: str, ids: list[uuid.UUID]) -> None:
        collection = self._collections[name]
        for point_id in ids:
            collection.points.pop(point_id, None)
        collection.invalidate()

    async def _delete_matching(self, name: str, conditions: Conditions) -> None:
        collection = self._collections[name]
        doomed = [
            point_id
            for point_id, point in collection.points.items()
            if payload_matches(point.payload, conditions)
        ]
        await self._delete_ids(name, doomed)

    async def _search(
        self,
        name: str,
        vector: UnitVector,
        top_k: int,
        conditions: Conditions,
        score_threshold: float | None,
    ) -> list[Hit]:
        collection = self._collections[name]
        order, matrix = collection.matrix()
        scores = matrix @ vector
        hits: list[Hit] = []
        for row in np.argsort(-scores):
            score = float(scores[row])
            if score_threshold is not None and score < score_threshold:
                break
            point = collection.points[order[row]]
            if payload_matches(point.payload, conditions):
                original, payload = split_payload(point.payload, str(point.engine_id))
                hits.append(Hit(id=original, score=score, payload=payload))
                if len(hits) == top_k:
                    break
        return hits

    @staticmethod
    def _eligible(point: PreparedPoint, conditions: Conditions, ids: set[uuid.UUID] | None) -> bool:
        """Whether a point is among the asked ids (if any) and matches the conditions."""
        in_scope = ids is None or point.engine_id in ids
        return in_scope and payload_matches(point.payload, conditions)

    @staticmethod
    def _ranked(scored: list[Scored], limit: int) -> list[Scored]:
        """The best `limit`, best first (ties in insertion order)."""
        return sorted(scored, key=lambda item: -item.score)[:limit]

    def _dense(self, collection: _Collection, query: DenseQuery) -> list[Scored]:
        order, matrix = collection.matrix()
        scores = matrix @ query.vector
        ids = None if query.ids is None else set(query.ids)
        scored = []
        for row, point_id in enumerate(order):
            point = collection.points[point_id]
            if self._eligible(point, query.conditions, ids):
                payload = dict(point.payload) if query.with_payload else {}
                scored.append(Scored(point_id, float(scores[row]), payload))
        return self._ranked(scored, query.limit)

    def _lexical(self, collection: _Collection, query: LexicalQuery) -> list[Scored]:
        points = collection.points.values()
        population = [
            point.sparse
            for point in points
            if point.sparse is not None and payload_matches(point.payload, query.idf_conditions)
        ]
        weights = _idf_weighted(query.sparse, population)
        ids = None if query.ids is None else set(query.ids)
        scored = []
        for point in points:
            if point.sparse is None or not self._eligible(point, query.conditions, ids):
                continue
            shared = [
                weights[int(term)] * float(weight)
                for term, weight in zip(point.sparse.indices, point.sparse.values, strict=True)
                if int(term) in weights
            ]
            if shared:
                payload = dict(point.payload) if query.with_payload else {}
                scored.append(Scored(point.engine_id, math.fsum(shared), payload))
        return self._ranked(scored, query.limit)

    async def _query_batch(self, name: str, queries: list[EngineQuery]) -> Batch:
        collection = self._collections[name]
        return [
            self._dense(collection, query)
            if isinstance(query, DenseQuery)
            else self._lexical(collection, query)
            for query in queries
        ]

    async def _count(self, name: str, conditions: Conditions) -> int:
        points = self._collections[name].points.values()
        return sum(1 for point in points if payload_matches(point.payload, conditions))

    async def _scroll(self, name: str, conditions: Conditions, limit: int) -> list[Listed]:
        found: list[Listed] = []
        for point in self._collections[name].points.values():
            if len(found) == limit:
                break
            if payload_matches(point.payload, conditions):
                original, payload = split_payload(point.payload, str(point.engine_id))
                found.append(Listed(id=original, payload=payload))
        return found

    async def _get(self, name: str, ids: list[uuid.UUID]) -> list[Point]:
        collection = self._collections[name]
        found = []
        for point_id in ids:
            point = collection.points.get(point_id)
            if point is not None:
                original, payload = split_payload(point.payload, str(point_id))
                sparse = None if point.sparse is None else point.sparse.as_model()
                vector = point.vector.copy()
                found.append(Point(id=original, vector=vector, payload=payload, sparse=sparse))
        return found

    async def _close(self) -> None:
        self._collections.clear()


def _idf_weighted(query: PreparedSparse, population: list[PreparedSparse]) -> dict[int, float]:
    """Each query term's weight times its IDF over the population of lexical vectors."""
    held = [set(sparse.indices.tolist()) for sparse in population]
    weighted = {}
    for term, weight in zip(query.indices.tolist(), query.values.tolist(), strict=True):
        holding = sum(1 for terms in held if term in terms)
        idf = math.log(1.0 + (len(held) - holding + 0.5) / (holding + 0.5))
        weighted[term] = weight * idf
    return weighted
