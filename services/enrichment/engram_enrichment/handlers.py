"""Enrichment's handlers: one typed input each, returning the events its durable writes owe."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from engram_enrichment.adapters.vectors import KnowledgeVectors
from engram_enrichment.announce import (
    REQUESTER,
    announcements,
    embedding_request,
    fact_text,
    section_embedding_request,
    withdrawn_by,
)
from engram_enrichment.bulk import Owed, Step, change_many
from engram_enrichment.domain.clock import as_utc
from engram_enrichment.domain.contradictions import reconcile
from engram_enrichment.domain.model import Entity, RecordAssertion
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.sections import changed_by
from engram_enrichment.domain.support import assert_record, is_stale
from engram_enrichment.knowledge import KnowledgeBase
from engram_enrichment.section_vectors import SectionVectors
from engram_enrichment.tombstones import Tombstones
from engram_events import Envelope
from engram_events.acks import merge_acknowledgements
from engram_events.payloads.embeddings import EmbeddingComputed
from engram_events.payloads.records import RecordTombstoned, RecordUpserted
from engram_vectors import FingerprintMismatch

log = logging.getLogger(__name__)
SERVICE = "enrichment"


class EnrichmentHandlers:
    """Records in, facts out; every announced change has been read back from the database."""

    def __init__(
        self, knowledge: KnowledgeBase, schema: Schema, vectors: KnowledgeVectors | None = None
    ) -> None:
        self.knowledge = knowledge
        self.schema = schema
        self.vectors = vectors
        self.sections = SectionVectors(vectors, knowledge) if vectors is not None else None
        self.tombstones = Tombstones(knowledge, schema, vectors, self.sections)

    async def _follow_up(
        self, entity: Entity, cause: str, event: Envelope[Any]
    ) -> list[Envelope[Any]]:
        """With recall on: embed facts and sections this cause changed, drop what is gone."""
        if self.vectors is None or self.sections is None:
            return []
        await self.vectors.remove(entity.tenant_id, withdrawn_by(entity, cause))
        requests = embedding_request(entity, cause=cause, caused_by=event)
        return requests + await self.sections.follow_up(entity, cause, event)

    async def on_embedding_computed(
        self, event: Envelope[EmbeddingComputed]
    ) -> list[Envelope[Any]]:
        """Store vectors for facts still live and sections still current; others' are not ours."""
        [result] = await self.on_embedding_computed_batch([event])
        if isinstance(result, Exception):
            raise result
        return result

    async def on_embedding_computed_batch(
        self, events: list[Envelope[EmbeddingComputed]]
    ) -> list[list[Envelope[Any]] | Exception]:
        """The batch route: fact and section vectors with one entity read and one upsert per
        tenant and embedder; a tenant's failure fails only its inputs (retried alone)."""
        results: list[list[Envelope[Any]] | Exception] = [[] for _ in events]
        if self.vectors is None or self.sections is None:
            return results
        facts: dict[str, list[int]] = defaultdict(list)
        sections: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, event in enumerate(events):
            computed = event.payload
            if computed.requester != REQUESTER:
                continue
            if computed.purpose == "article_section":
                sections[(event.tenant_id, computed.provenance.fingerprint)].append(i)
            else:
                facts[event.tenant_id].append(i)
        for (tenant, fingerprint), mine in sections.items():
            try:
                await self.sections.store(
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
                await self._store_fact_vectors(tenant, [events[i].payload for i in mine])
            except Exception as exc:
                for i in mine:
                    results[i] = exc
        return results

    async def _store_fact_vectors(self, tenant: str, computed: list[EmbeddingComputed]) -> None:
        """Vectors of facts still live, grouped by the embedder that computed them."""
        assert self.vectors is not None
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
                if fact is not None and fact.live:
                    text = fact_text(entity_id, fact)
                    by_embedder[fingerprint].append((entity_id, item.item_id, text, item.vector))
        for fingerprint, points in by_embedder.items():
            try:
                await self.vectors.put_facts(tenant, points, fingerprint, provenance[fingerprint])
            except FingerprintMismatch:
                log.warning("embedder mismatch", extra={"tenant_id": tenant, "count": len(points)})
                continue
            log.info("fact vectors stored", extra={"tenant_id": tenant, "count": len(points)})

    def _upsert_step(self, event: Envelope[RecordUpserted]) -> Step:
        """The record's change to its entity, and what it owes read from the state after it."""
        record = event.payload
        cause = str(event.event_id)
        assertion = RecordAssertion(
            record_id=record.record_id,
            record_type=record.record_type,
            revision=record.revision,
            attributes=record.attributes,
            document_id=record.lineage.document_id,
            locator=record.lineage.locator,
            observed_at=as_utc(record.observed_at),
        )
        why = f"record {record.record_id} revision {record.revision} no longer asserts it"

        def mutate(entity: Entity) -> None:
            if is_stale(entity, record.record_id, record.revision):
                return
            assert_record(entity, assertion, self.schema)
            reconcile(entity, self.schema, cause=cause, at=assertion.observed_at, why=why)

        def owes(entity: Entity) -> Owed:
            events = announcements(
                entity, cause=cause, caused_by=event, because_record_id=record.record_id
            )
            if self.vectors is None:
                return Owed(events)
            active, removed = changed_by(entity, cause)
            events += embedding_request(entity, cause=cause, caused_by=event)
            events += section_embedding_request(entity, active, cause=cause, caused_by=event)
            return Owed(events, withdrawn_by(entity, cause) + removed)

        return Step(
            tenant_id=event.tenant_id,
            entity_id=record.entity_id,
            entity_type=record.record_type,
            mutate=mutate,
            cause=cause,
            at=assertion.observed_at,
            owes=owes,
        )

    async def on_record_upserted(self, event: Envelope[RecordUpserted]) -> list[Envelope[Any]]:
        """Move the record's support to the values of this revision; stale revisions change nothing."""
        record = event.payload
        step = self._upsert_step(event)
        await self.knowledge.store.remember_record(step.tenant_id, record.record_id, step.entity_id)
        outcome = await self.knowledge.change(
            step.tenant_id,
            step.entity_id,
            step.entity_type,
            step.mutate,
            cause=step.cause,
            at=step.at,
        )
        published = announcements(
            outcome.entity, cause=step.cause, caused_by=event, because_record_id=record.record_id
        )
        published += await self._follow_up(outcome.entity, step.cause, event)
        log.info(
            "record applied",
            extra={
                "tenant_id": step.tenant_id,
                "record_id": record.record_id,
                "entity_id": step.entity_id,
                "written": outcome.written,
                "published_count": len(published),
            },
        )
        return published

    async def on_record_upserted_batch(
        self, events: list[Envelope[RecordUpserted]]
    ) -> list[list[Envelope[Any]] | Exception]:
        """The batch route: per record, its events or why it failed (retried alone)."""
        steps = [self._upsert_step(event) for event in events]
        remembered: dict[str, Exception | None] = {}
        for tenant in dict.fromkeys(step.tenant_id for step in steps):
            pairs = [
                (e.payload.record_id, e.payload.entity_id) for e in events if e.tenant_id == tenant
            ]
            try:
                await self.knowledge.store.remember_records(tenant, pairs)
                remembered[tenant] = None
            except Exception as exc:
                remembered[tenant] = exc
        kept = [step for step in steps if remembered[step.tenant_id] is None]
        changed = iter(await change_many(self.knowledge, kept))
        results: list[Owed | Exception] = [
            remembered[step.tenant_id] or next(changed) for step in steps
        ]
        await self._remove_vectors(steps, results)
        applied = sum(1 for r in results if isinstance(r, Owed))
        log.info("records applied", extra={"count": applied, "failed_count": len(steps) - applied})
        return [r.events if isinstance(r, Owed) else r for r in results]

    async def _remove_vectors(self, steps: list[Step], results: list[Owed | Exception]) -> None:
        """Drop vectors the applied steps made obsolete; a failure fails that tenant's steps."""
        if self.vectors is None:
            return
        for tenant in dict.fromkeys(step.tenant_id for step in steps):
            mine = [i for i, s in enumerate(steps) if s.tenant_id == tenant]
            gone = [v for i in mine if isinstance(r := results[i], Owed) for v in r.gone_vectors]
            try:
                await self.vectors.remove(tenant, list(dict.fromkeys(gone)))
            except Exception as exc:
                for i in mine:
                    results[i] = exc

    async def on_record_tombstoned(self, event: Envelope[RecordTombstoned]) -> list[Envelope[Any]]:
        """Remove the record from every fact's support; withdraw emptied facts; ack a prune."""
        return await self.tombstones.one(event)

    async def on_record_tombstoned_batch(
        self, events: list[Envelope[RecordTombstoned]]
    ) -> list[list[Envelope[Any]] | BaseException]:
        """The batch route: a prune brings one tombstone per record, and its job one
        acknowledgement per batch."""
        return merge_acknowledgements(await self.tombstones.many(events))
