"""Section vectors follow the sections: a prune must not leave one citing a tombstoned record."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from engram_enrichment.domain.model import ArticleSection, Entity
from engram_enrichment.domain.sections import changed_by, embedding_texts, entity_of
from engram_enrichment.ports import KnowledgeIndex
from engram_enrichment.service.announce import (
    parse_section_item,
    section_embedding_request,
    section_text,
)
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_events import Envelope
from engram_events.payloads.embeddings import EmbeddedItem
from engram_vectors import FingerprintMismatch

log = logging.getLogger(__name__)


class SectionVectors:
    """Stale vectors stay searchable until replaced, except those citing a retracted record."""

    def __init__(self, vectors: KnowledgeIndex, knowledge: KnowledgeBase) -> None:
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
        self, tenant_id: str, section_ids: Sequence[str], record_ids: Sequence[str]
    ) -> list[str]:
        """`citing_ids` over many sections, a few thousand points per lookup."""
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
        """Write vectors whose section is active with the same text; returns how many stayed.

        One read of the entities, one upsert, one read again: a change that landed while
        writing (a tombstone, say) leaves no vector of old text.
        """
        wanted = [(*parse_section_item(item.item_id), item) for item in items]
        before = await self._entities(tenant_id, [section_id for section_id, _, _ in wanted])
        current = [
            (section, digest, item)
            for section_id, digest, item in wanted
            if (section := _current(before.get(entity_of(section_id)), section_id, digest))
        ]
        texts = _texts(before, [s for s, _, _ in current])
        try:
            await self.vectors.put_sections(
                tenant_id,
                [
                    (entity_of(s.section_id), s, texts[s.section_id], item.vector)
                    for s, _, item in current
                ],
                fingerprint,
                provenance,
            )
        except FingerprintMismatch:
            log.warning("embedder mismatch", extra={"tenant_id": tenant_id, "count": len(current)})
            return 0
        after = await self._entities(tenant_id, [s.section_id for s, _, _ in current])
        stale = [
            s.section_id
            for s, digest, _ in current
            if _current(after.get(entity_of(s.section_id)), s.section_id, digest) is None
        ]
        await self.vectors.remove(tenant_id, stale)
        stored = len(current) - len(stale)
        log.info("section vectors stored", extra={"tenant_id": tenant_id, "count": stored})
        return stored

    async def _entities(self, tenant_id: str, section_ids: Sequence[str]) -> dict[str, Entity]:
        """The stored entities these sections belong to, by entity id."""
        if not section_ids:
            return {}
        entity_ids = sorted({entity_of(section_id) for section_id in section_ids})
        loaded = await self.knowledge.load_many(tenant_id, entity_ids)
        return {entity.entity_id: entity for entity in loaded}


def _texts(entities: dict[str, Entity], sections: Sequence[ArticleSection]) -> dict[str, str]:
    """Each section's embedded text as its entity gives it now (its hash matched, so the values
    and statuses are those embedded), computing an entity's texts once for all its sections."""
    by_entity: dict[str, dict[str, str]] = {}
    found: dict[str, str] = {}
    for section in sections:
        entity = entities[entity_of(section.section_id)]
        if entity.entity_id not in by_entity:
            by_entity[entity.entity_id] = embedding_texts(entity)
        found[section.section_id] = section_text(
            entity, section.attribute, by_entity[entity.entity_id]
        )
    return found


def _current(entity: Entity | None, section_id: str, digest: str) -> ArticleSection | None:
    """The section if it is active and its text still has this hash prefix."""
    section = entity.sections.get(section_id) if entity else None
    if section is None or section.status != "active" or not digest:
        return None
    return section if (section.text_sha256 or "").startswith(digest) else None
