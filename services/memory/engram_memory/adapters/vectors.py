"""The memory collection: one point per stored memory, with what recall returns in its payload."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engram_vectors import CollectionNotFound, Hit, Point, VectorStore


def point_id(tenant_id: str, memory_id: str) -> str:
    """Point ids start with the tenant, like row ids."""
    return f"{tenant_id}:{memory_id}"


class MemoryVectors:
    """The collection tied to one embedder fingerprint; every query names tenant and agent."""

    def __init__(self, store: VectorStore, collection: str) -> None:
        self.store = store
        self.collection = collection

    async def open(self, dimension: int, fingerprint: str) -> str:
        """Create the collection for this embedder if new; return the fingerprint it holds."""
        try:
            return await self.store.collection_fingerprint(self.collection)
        except CollectionNotFound:
            await self.store.ensure_collection(self.collection, dimension, fingerprint)
            return fingerprint

    async def fingerprint(self) -> str:
        """The embedder fingerprint stored with the collection."""
        return await self.store.collection_fingerprint(self.collection)

    async def put(
        self,
        row: Mapping[str, Any],
        vector: Sequence[float],
        provenance: Mapping[str, Any],
        status: str,
    ) -> None:
        """Write (or rewrite) a memory's point; refuses vectors of another embedder."""
        await self.put_many([(row, vector, status)], provenance)

    async def put_many(
        self,
        entries: Sequence[tuple[Mapping[str, Any], Sequence[float], str]],
        provenance: Mapping[str, Any],
    ) -> None:
        """Write the points of many memories embedded by one embedder, in one upsert.

        The payload carries what recall returns (content, provenance, created_at), so recall
        never waits on Mongo; withdrawal deletes the point before it touches the row.
        """
        fingerprint = str(provenance["fingerprint"])
        points = [
            Point(
                point_id(row["tenant_id"], row["memory_id"]),
                vector,
                _payload(row, provenance, status),
            )
            for row, vector, status in entries
        ]
        if points:
            await self.store.upsert(self.collection, points, fingerprint=fingerprint)

    async def set_status(self, tenant_id: str, memory_id: str, status: str) -> bool:
        """Rewrite a point's status payload (e.g. superseded); False when it has no point."""
        points = await self.store.get(self.collection, [point_id(tenant_id, memory_id)])
        if not points:
            return False
        point = points[0]
        if point.payload.get("tenant_id") != tenant_id:
            return False
        await self.store.upsert(
            self.collection, [Point(point.id, point.vector, {**point.payload, "status": status})]
        )
        return True

    async def remove(self, tenant_id: str, memory_ids: Sequence[str]) -> None:
        """Delete points; unknown ids are ignored."""
        if memory_ids:
            await self.store.delete(self.collection, [point_id(tenant_id, m) for m in memory_ids])

    async def count(self, selection: Mapping[str, Any]) -> int:
        """Points matching a selection (the same flat filter rows take)."""
        return await self.store.count(self.collection, dict(selection))

    async def search(
        self,
        tenant_id: str,
        agent_id: str,
        vector: Sequence[float],
        top_k: int,
        *,
        statuses: Sequence[str],
        types: Sequence[str] | None,
        fingerprint: str,
    ) -> list[Hit]:
        """The raw top-k within one tenant's agent (both predicates always present)."""
        query: dict[str, Any] = {
            "tenant_id": tenant_id,
            "agent_id": agent_id,
            "status": list(statuses),
        }
        if types:
            query["type"] = list(types)
        return await self.store.search(
            self.collection, vector, top_k, filter=query, fingerprint=fingerprint
        )


def _payload(row: Mapping[str, Any], provenance: Mapping[str, Any], status: str) -> dict[str, Any]:
    """What a point carries: ids, status, content, provenance and when it was written."""
    created = row["created_at"]
    return {
        "tenant_id": row["tenant_id"],
        "agent_id": row["agent_id"],
        "memory_id": row["memory_id"],
        "type": row["type"],
        "status": status,
        "content": row.get("content"),
        "provenance": dict(provenance),
        "created_at": created.isoformat() if hasattr(created, "isoformat") else str(created),
    }
