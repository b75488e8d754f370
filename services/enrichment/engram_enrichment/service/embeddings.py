"""Vectors computed for us: stored for facts still live, sections still current and passages
still holding the embedded text."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from engram_enrichment.ports import KnowledgeIndex
from engram_enrichment.service.announce import REQUESTER, fact_text
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.passages import PassageIndexing
from engram_enrichment.service.section_vectors import SectionVectors
from engram_events import Envelope
from engram_events.payloads.embeddings import EmbeddingComputed
from engram_vectors import FingerprintMismatch

log = logging.getLogger(__name__)


class ComputedVectors:
    """Results of other requesters are not ours; a stale one is dropped, not stored."""

    def __init__(
        self,
        knowledge: KnowledgeBase,
        vectors: KnowledgeIndex,
        sections: SectionVectors,
        passages: PassageIndexing | None = None,
    ) -> None:
        self.knowledge = knowledge
        self.vectors = vectors
        self.sections = sections
        self.passages = passages

    async def store(
        self, events: list[Envelope[EmbeddingComputed]]
    ) -> list[list[Envelope[Any]] | Exception]:
        """Fact and section vectors with one entity read and one upsert per tenant and
        embedder; a tenant's failure fails only its inputs (retried alone)."""
        results: list[list[Envelope[Any]] | Exception] = [[] for _ in events]
        facts: dict[str, list[int]] = defaultdict(list)
        sections: dict[tuple[str, str], list[int]] = defaultdict(list)
        passages: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, event in enumerate(events):
            computed = event.payload
            if computed.requester != REQUESTER:
                continue
            if computed.purpose == "passage":
                passages[(event.tenant_id, computed.provenance.fingerprint)].append(i)
            elif computed.purpose == "article_section":
                sections[(event.tenant_id, computed.provenance.fingerprint)].append(i)
            else:
                facts[event.tenant_id].append(i)
        for store, groups in ((self.sections, sections), (self.passages, passages)):
            if store is None:
                continue
            for (tenant, fingerprint), mine in groups.items():
                try:
                    await store.store(
                        tenant,
                        [item for i in mine for item in events[i].payload.items],
                        fingerprint,
                        events[mine[0]].payload.provenance.model_dump(),
                    )
                except Exception as exc:
                    for i in mine:
                        results[i] = exc
        for tenant, mine in facts.items():
            try:
                await self._store_facts(tenant, [events[i].payload for i in mine])
            except Exception as exc:
                for i in mine:
                    results[i] = exc
        return results

    async def _store_facts(self, tenant: str, computed: list[EmbeddingComputed]) -> None:
        """Vectors of facts still held (live, or a closed time slice), grouped by the embedder that computed them."""
        entity_ids = {item.item_id.rsplit(":", 2)[0] for c in computed for item in c.items}
        loaded = await self.knowledge.load_many(tenant, sorted(entity_ids))
        entities = {entity.entity_id: entity for entity in loaded}
        by_embedder: dict[str, list[tuple[str, str, str, Sequence[float]]]] = defaultdict(list)
        provenance: dict[str, dict[str, Any]] = {}
        for result in computed:
            fingerprint = result.provenance.fingerprint
            provenance.setdefault(fingerprint, result.provenance.model_dump())
            for item in result.items:
                entity_id = item.item_id.rsplit(":", 2)[0]
                entity = entities.get(entity_id)
                fact = entity.facts.get(item.item_id) if entity else None
                if fact is not None and fact.held:
                    text = fact_text(entity_id, fact)
                    by_embedder[fingerprint].append((entity_id, item.item_id, text, item.vector))
        for fingerprint, points in by_embedder.items():
            try:
                await self.vectors.put_facts(tenant, points, fingerprint, provenance[fingerprint])
            except FingerprintMismatch:
                log.warning("embedder mismatch", extra={"tenant_id": tenant, "count": len(points)})
                continue
            log.info("fact vectors stored", extra={"tenant_id": tenant, "count": len(points)})
