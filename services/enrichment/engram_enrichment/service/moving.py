"""The knowledge collection search reads, and during a reindex the one it moves to: writes land
in both (each space's vectors from its own embedder), reads stay on the old until the switch."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from engram_embedders import moving
from engram_enrichment.domain.model import ArticleSection
from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.ports import (
    ARTICLE_SECTION,
    FACT,
    PASSAGE,
    MovableKnowledge,
    StoredPassage,
)
from engram_vectors import HybridHit, SparseVector

Embedded = moving.Embedded[MovableKnowledge]
"""A knowledge collection and the embedder whose space it holds."""
Entry = tuple[Any, ...]
"""A point to write: its fields, the text embedded and the vector, last (every kind's shape)."""
Put = Callable[[MovableKnowledge, list[Entry], str, dict[str, Any] | None], Awaitable[None]]
WRITES = {FACT: "put_facts", ARTICLE_SECTION: "put_sections", PASSAGE: "put_passages"}


def writer(kind: str, tenant_id: str) -> Put:
    """The collection's write of a kind's points for a tenant."""
    method = WRITES[kind]

    async def put(
        vectors: MovableKnowledge,
        entries: list[Entry],
        fingerprint: str,
        provenance: dict[str, Any] | None,
    ) -> None:
        await getattr(vectors, method)(tenant_id, entries, fingerprint, provenance)

    return put


async def embed_into(space: Embedded, entries: Sequence[Entry], put: Put) -> None:
    """Embed the entries' texts with the space's own embedder and write them there with its
    provenance (the vectors they came with are of another space and are not used)."""
    if not entries:
        return
    embedded = await space.embedder.embed([str(entry[-2]) for entry in entries])
    fresh = [
        (*entry[:-1], vector.tolist())
        for entry, vector in zip(entries, embedded.vectors, strict=True)
    ]
    await put(space.vectors, fresh, space.fingerprint, space.embedder.provenance.model_dump())


class MovingKnowledge(moving.Moving[MovableKnowledge]):
    """KnowledgeIndex over the active space, and the target space while a reindex runs; every
    write is tracked, so a walk starts only after those begun without the target ended."""

    @property
    def lexical(self) -> str | None:
        return self.active.vectors.lexical

    async def fingerprint(self) -> str:
        return await self.active.vectors.fingerprint()

    async def _put(
        self,
        entries: Sequence[Entry],
        fingerprint: str,
        provenance: dict[str, Any] | None,
        put: Put,
    ) -> None:
        """The active space as given (embedded there when foreign and `reembeds`), the target
        with its own embedder."""

        async def write(spaces: list[Embedded]) -> None:
            active, *target = spaces
            if self.reembeds and fingerprint != active.fingerprint:
                await embed_into(active, entries, put)
            elif entries:
                await put(active.vectors, list(entries), fingerprint, provenance)
            for space in target:
                await embed_into(space, entries, put)

        await self.track(write)

    async def put_facts(
        self,
        tenant_id: str,
        facts: Sequence[tuple[str, str, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        await self._put(facts, fingerprint, provenance, writer(FACT, tenant_id))

    async def put_sections(
        self,
        tenant_id: str,
        sections: Sequence[tuple[str, ArticleSection, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        await self._put(sections, fingerprint, provenance, writer(ARTICLE_SECTION, tenant_id))

    async def put_passages(
        self,
        tenant_id: str,
        passages: Sequence[tuple[PassageRow, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        await self._put(passages, fingerprint, provenance, writer(PASSAGE, tenant_id))

    async def remove_passages_of(self, tenant_id: str, document_id: str) -> None:
        async def write(spaces: list[Embedded]) -> None:
            for space in spaces:
                await space.vectors.remove_passages_of(tenant_id, document_id)

        await self.track(write)

    async def remove(self, tenant_id: str, item_ids: Sequence[str]) -> None:
        async def write(spaces: list[Embedded]) -> None:
            for space in spaces:
                await space.vectors.remove(tenant_id, item_ids)

        await self.track(write)

    async def count_passages_of(self, tenant_id: str, document_ids: Sequence[str]) -> int:
        return await self.active.vectors.count_passages_of(tenant_id, document_ids)

    async def passage_points(
        self, tenant_id: str, passage_ids: Sequence[str]
    ) -> list[StoredPassage]:
        return await self.active.vectors.passage_points(tenant_id, passage_ids)

    async def payloads(self, tenant_id: str, item_ids: Sequence[str]) -> list[dict[str, Any]]:
        return await self.active.vectors.payloads(tenant_id, item_ids)

    async def candidates(
        self,
        tenant_id: str,
        vector: Sequence[float],
        sparse: SparseVector | None,
        limit: int,
        *,
        fingerprint: str,
        kinds: Sequence[str] | None = None,
    ) -> list[HybridHit]:
        return await self.active.vectors.candidates(
            tenant_id, vector, sparse, limit, fingerprint=fingerprint, kinds=kinds
        )
