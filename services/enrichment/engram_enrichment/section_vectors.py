"""Section vectors follow the sections: a prune must not leave one citing a tombstoned record."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from engram_enrichment.adapters.vectors import KnowledgeVectors
from engram_enrichment.announce import parse_section_item, section_embedding_request
from engram_enrichment.domain.model import ArticleSection, Entity
from engram_enrichment.domain.sections import changed_by, entity_of
from engram_enrichment.knowledge import KnowledgeBase
from engram_events import Envelope
from engram_events.payloads.embeddings import EmbeddedItem
from engram_vectors import FingerprintMismatch

log = logging.getLogger(__name__)


class SectionVectors:
    """Stale vectors stay searchable until replaced, except those citing a retracted record."""

    def __init__(self, vectors: KnowledgeVectors, knowledge: KnowledgeBase) -> None:
        self.vectors = vectors
        self.knowledge = knowledge

    async def follow_up(
        self, entity: Entity, cause: str, caused_by: Envelope[Any] | None = None
    ) -> list[Envelope[Any]]:
        """Delete vectors of removed sections; request vectors of the ones this cause wrote."""
        active, removed = changed_by(entity, cause)
        await self.vectors.remove(entity.tenant_id, removed)
        return section_embedding_request(entity, active, cause=cause, caused_by=caused_by)

    async def citing(self, entity: Entity, record_ids: Sequence[str]) -> list[str]:
        """Ids of this entity's section vectors whose payload cites one of the records."""
        return await self.citing_ids(entity.tenant_id, sorted(entity.sections), record_ids)

    async def citing_many(
        self, tenant_id: str, entities: Sequence[Entity], record_ids: Sequence[str]
    ) -> list[str]:
        """`citing` over many entities, a few thousand points per lookup."""
        section_ids = sorted({s for entity in entities for s in entity.sections})
        found: list[str] = []
        for start in range(0, len(section_ids), 2000):
            chunk = section_ids[start : start + 2000]
            found += await self.citing_ids(tenant_id, chunk, record_ids)
        return found

    async def citing_ids(
        self, tenant_id: str, section_ids: Sequence[str], record_ids: Sequence[str]
    ) -> list[str]:
        """Which of these section vectors' payloads cite one of the records."""
        wanted = set(record_ids)
        if not section_ids or not wanted:
            return []
        payloads = await self.vectors.payloads(tenant_id, list(section_ids))
        return [
            str(p["section_id"])
            for p in payloads
            if p.get("section_id") and wanted.intersection(p.get("record_ids") or [])
        ]

    async def store(
        self,
        tenant_id: str,
        items: Sequence[EmbeddedItem],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> int:
        """Write vectors whose section is active with the same text; returns how many stayed."""
        by_entity: dict[str, list[tuple[str, str, EmbeddedItem]]] = {}
        for item in items:
            section_id, digest = parse_section_item(item.item_id)
            by_entity.setdefault(entity_of(section_id), []).append((section_id, digest, item))
        stored = 0
        for entity_id, wanted in sorted(by_entity.items(), key=lambda kv: kv[0]):
            entity = await self.knowledge.load(tenant_id, entity_id)
            written: list[tuple[str, str]] = []
            for section_id, digest, item in wanted:
                section = _current(entity, section_id, digest)
                if section is None:
                    continue
                try:
                    await self.vectors.put_section(
                        tenant_id, entity_id, section, item.vector, fingerprint, provenance
                    )
                except FingerprintMismatch:
                    log.warning(
                        "embedder mismatch",
                        extra={"tenant_id": tenant_id, "section_id": section_id},
                    )
                    continue
                written.append((section_id, digest))
            stored += len(written) - await self._undo_overtaken(tenant_id, entity_id, written)
        log.info("section vectors stored", extra={"tenant_id": tenant_id, "count": stored})
        return stored

    async def _undo_overtaken(
        self, tenant_id: str, entity_id: str, written: list[tuple[str, str]]
    ) -> int:
        """A change (a tombstone, say) that landed while writing leaves no vector of old text."""
        if not written:
            return 0
        entity = await self.knowledge.load(tenant_id, entity_id)
        stale = [sid for sid, digest in written if _current(entity, sid, digest) is None]
        await self.vectors.remove(tenant_id, stale)
        return len(stale)


def _current(entity: Entity | None, section_id: str, digest: str) -> ArticleSection | None:
    """The section if it is active and its text still has this hash prefix."""
    section = entity.sections.get(section_id) if entity else None
    if section is None or section.status != "active" or not digest:
        return None
    return section if (section.text_sha256 or "").startswith(digest) else None
