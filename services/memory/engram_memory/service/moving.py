"""The memory collection recall reads, and during a reindex the one it moves to: writes land in
both, reads stay on the old until `switch` swaps them in one assignment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engram_embedders import moving
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.selection import Selection
from engram_memory.ports import MovablePoints
from engram_vectors import HybridHit, SparseVector

Entry = tuple[MemoryRow, Sequence[float], str]


Embedded = moving.Embedded[MovablePoints]
"""The memory collection and the embedder whose space it holds."""


async def embed_into(space: Embedded, entries: Sequence[Entry]) -> Mapping[str, Any]:
    """Embed the memories' content with the space's own embedder and write their points there
    (the vectors the entries came with are of another space and are not used); returns the
    space's provenance."""
    provenance = space.embedder.provenance.model_dump()
    if not entries:
        return provenance
    texts = [row.content or "" for row, _, _ in entries]
    embedded = await space.embedder.embed(texts)
    return await space.vectors.put_many(
        [
            (row, vector.tolist(), status)
            for (row, _, status), vector in zip(entries, embedded.vectors, strict=True)
        ],
        provenance,
    )


class MovingVectors(moving.Moving[MovablePoints]):
    """MemoryPoints over the active space, and the target space while a reindex runs (foreign
    writes after a switch are embedded here: `Moving.reembeds`)."""

    @property
    def lexical(self) -> str | None:
        return self.active.vectors.lexical

    async def fingerprint(self) -> str:
        return await self.active.vectors.fingerprint()

    async def put_many(
        self, entries: Sequence[Entry], provenance: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """Into the active space (re-embedded there when foreign and `reembeds`), then the
        target's own embedding into the target; returns the active space's provenance."""
        active, target = self.active, self.target
        if self.reembeds and str(provenance["fingerprint"]) != active.fingerprint:
            stored = await embed_into(active, entries)
        else:
            stored = await active.vectors.put_many(entries, provenance)
        if target is not None:
            await embed_into(target, entries)
        return stored

    async def set_status(
        self, tenant_id: str, memory_id: str, status: str, *, superseded_by: str | None = None
    ) -> None:
        for space in self.spaces():
            await space.vectors.set_status(
                tenant_id, memory_id, status, superseded_by=superseded_by
            )

    async def remove(self, tenant_id: str, memory_ids: Sequence[str]) -> None:
        for space in self.spaces():
            await space.vectors.remove(tenant_id, memory_ids)

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
        return await self.active.vectors.candidates(
            selection, vector, sparse, limit, fingerprint=fingerprint, with_payload=with_payload
        )

    async def hit_payloads(self, hits: Sequence[HybridHit]) -> dict[str, HybridHit]:
        return await self.active.vectors.hit_payloads(hits)
