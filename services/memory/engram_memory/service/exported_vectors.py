"""The stored vectors a tenant export carries: the active space's points, with the provenance
of the embedder that made them, so an import into the same embedder need not embed again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram_memory.service.moving import MovingVectors


class ExportedVectors:
    """Reads stored vectors by memory id (a memory without one, e.g. expired, is left out)."""

    def __init__(self, vectors: MovingVectors) -> None:
        self.vectors = vectors

    async def of(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, Any]:
        """`{"provenance", "vectors": {memory_id: [floats]}}` of the active space."""
        space = self.vectors.active
        found = await space.vectors.points(tenant_id, memory_ids)
        return {
            "provenance": space.embedder.provenance.model_dump(),
            "vectors": {m: [float(x) for x in p.vector] for m, p in found.items()},
        }
