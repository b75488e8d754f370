"""The memory collection: one point per stored memory, with what recall returns in its payload,
a dense vector from the embedder and a lexical one from the content (hybrid recall)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engram_events.memory_filter import MetadataCondition
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.selection import Selection
from engram_platform.give_way import give_way
from engram_vectors import (
    Exists,
    HybridHit,
    PayloadFilter,
    Point,
    Range,
    SparseVector,
)
from engram_vectors.lexical import document_vector
from engram_vectors.opening import ServiceCollection
from engram_vectors.port import VectorStore

KEYWORD_INDEXES = ("tenant_id", "agent_id", "status", "type", "user_id", "session_id")
"""Payload fields recall filters on, each with a keyword index (metadata keys are free-form
and filtered unindexed, inside the same query)."""


def point_id(tenant_id: str, memory_id: str) -> str:
    """Point ids start with the tenant, like row ids."""
    return f"{tenant_id}:{memory_id}"


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def _metadata_condition(key: str, condition: MetadataCondition) -> tuple[str, Any]:
    """One metadata condition as a payload field and filter value; time ranges compare the
    instants kept in `metadata_at`, never the text."""
    if condition.exists is not None:
        return f"metadata.{key}", Exists(condition.exists)
    if condition.in_ is not None:
        return f"metadata.{key}", list(condition.in_)
    if condition.gte is None and condition.lte is None:
        return f"metadata.{key}", condition.eq
    field = f"metadata_at.{key}" if condition.is_time_range else f"metadata.{key}"
    return field, Range(gte=condition.bound("gte"), lte=condition.bound("lte"))


def payload_filter(selection: Selection) -> dict[str, Any]:
    """A Selection as a payload filter run inside the vector query (never a post-filter)."""
    query: dict[str, Any] = {
        "tenant_id": selection.tenant_id,
        "agent_id": list(selection.agent_ids),
    }
    if selection.statuses is not None:
        query["status"] = list(selection.statuses)
    types = selection.wanted_types()
    if types is not None:
        query["type"] = list(types)
    for name in ("user_id", "session_id"):
        if getattr(selection.filter, name) is not None:
            query[name] = getattr(selection.filter, name)
    for key, condition in selection.filter.conditions().items():
        field, value = _metadata_condition(key, condition)
        query[field] = value
    return query


class MemoryVectors(ServiceCollection):
    """The collection tied to one embedder fingerprint; every query names tenant and agent.
    Memories are encoded with the lexical encoder the collection was built with."""

    def __init__(self, store: VectorStore, collection: str, *, lexical: bool = True) -> None:
        super().__init__(store, collection, lexical=lexical, adopts=True)

    async def put(
        self,
        row: MemoryRow,
        vector: Sequence[float],
        provenance: Mapping[str, Any],
        status: str,
    ) -> None:
        """Write (or rewrite) a memory's point; refuses vectors of another embedder."""
        await self.put_many([(row, vector, status)], provenance)

    async def put_many(
        self,
        entries: Sequence[tuple[MemoryRow, Sequence[float], str]],
        provenance: Mapping[str, Any],
    ) -> Mapping[str, Any]:
        """Write the points of many memories embedded by one embedder, in one upsert; returns
        the provenance they carry.

        The payload carries what recall returns (content, provenance, created_at, scope,
        metadata, supersession), so recall never waits on Mongo; withdrawal deletes the point
        before it touches the row.
        """
        fingerprint = str(provenance["fingerprint"])
        points = []
        for row, vector, status in entries:
            await give_way()
            points.append(
                Point(
                    point_id(row.tenant_id, row.memory_id),
                    vector,
                    _payload(row, provenance, status),
                    sparse=self._sparse(row.content or ""),
                )
            )
        if points:
            await self.store.upsert(self.collection, points, fingerprint=fingerprint)
        return provenance

    def _sparse(self, content: str) -> SparseVector | None:
        """The content's lexical vector, by the collection's encoder (None: dense only)."""
        return None if self.lexical is None else document_vector(content, self.lexical)

    async def set_status(
        self, tenant_id: str, memory_id: str, status: str, *, superseded_by: str | None = None
    ) -> None:
        """Rewrite a point's status (and what superseded it) in place; vectors are untouched."""
        fields: dict[str, Any] = {"status": status}
        if superseded_by is not None:
            fields["superseded_by"] = superseded_by
        await self.store.set_payload(self.collection, [point_id(tenant_id, memory_id)], fields)

    async def remove(self, tenant_id: str, memory_ids: Sequence[str]) -> None:
        """Delete points; unknown ids are ignored."""
        if memory_ids:
            await self.store.delete(self.collection, [point_id(tenant_id, m) for m in memory_ids])

    async def total(self) -> int:
        """Every point of the collection (a reindex's count check)."""
        return await self.store.count(self.collection)

    async def points(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, Point]:
        """Stored points by memory id, vectors included (a reindex's spot check)."""
        found = await self.store.get(self.collection, [point_id(tenant_id, m) for m in memory_ids])
        return {str(p.payload.get("memory_id")): p for p in found}

    async def count(self, selection: PayloadFilter) -> int:
        """Points matching a flat payload filter."""
        return await self.store.count(self.collection, dict(selection))

    async def candidates(
        self,
        selection: Selection,
        vector: Sequence[float],
        sparse: SparseVector | None,
        limit: int,
        *,
        fingerprint: str,
        with_payload: bool = True,
    ) -> list[HybridHit]:
        """Dense and lexical candidates within the selection (tenant and agent always), each
        with both scores; word weights come from this agent's memories only. Without payload,
        `hit_payloads` reads those of the hits kept."""
        scope = {"tenant_id": selection.tenant_id, "agent_id": list(selection.agent_ids)}
        return await self.store.hybrid_search(
            self.collection,
            vector=vector,
            sparse=sparse if self.lexical else None,
            limit=limit,
            filter=payload_filter(selection),
            fingerprint=fingerprint,
            idf_filter=scope,
            with_payload=with_payload,
        )

    async def hit_payloads(self, hits: Sequence[HybridHit]) -> dict[str, HybridHit]:
        """Candidates found without payloads, by the engine id each came with, with their ids
        and payloads read; gone points are left out."""
        return await self.store.hit_payloads(self.collection, hits)


def _payload(row: MemoryRow, provenance: Mapping[str, Any], status: str) -> dict[str, Any]:
    """What a point carries: ids, scope, status, content, metadata, provenance, supersession,
    when it was written and, if it expires, when (recall checks it on every hit)."""
    payload = {
        "tenant_id": row.tenant_id,
        "agent_id": row.agent_id,
        "memory_id": row.memory_id,
        "type": row.type,
        "status": status,
        "content": row.content,
        "metadata": dict(row.metadata or {}),
        "metadata_at": {k: _iso(v) for k, v in (row.metadata_at or {}).items()},
        "provenance": dict(provenance),
        "created_at": _iso(row.created_at),
        "supersedes": row.supersedes,
        "superseded_by": row.superseded_by,
    }
    if row.user_id is not None:
        payload["user_id"] = row.user_id
    if row.session_id is not None:
        payload["session_id"] = row.session_id
    if row.expires_at is not None:
        payload["expires_at"] = _iso(row.expires_at)
    return payload
