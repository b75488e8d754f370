"""Enrichment's part of a prune: a tombstoned record's support leaves every fact it backed.

A prune brings one `record.tombstoned` per record. A run of them is applied like a run of
upserts (`bulk.change_many`): each entity is loaded, written and read back once, each input
announces what it would have announced alone, and its job's acknowledgement comes last,
only after the write reads back and the vectors it made obsolete are deleted.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from engram_enrichment.domain.clock import as_utc
from engram_enrichment.domain.contradictions import reconcile
from engram_enrichment.domain.model import Entity
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.sections import changed_by
from engram_enrichment.domain.support import retract_record
from engram_enrichment.ports import KnowledgeIndex
from engram_enrichment.service.announce import (
    announcements,
    embedding_request,
    section_embedding_request,
    withdrawn_by,
)
from engram_enrichment.service.bulk import Key, Owed, Step, change_many
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.section_vectors import SectionVectors
from engram_events import Envelope
from engram_events.acks import tombstone_applied
from engram_events.payloads.records import RecordTombstoned
from engram_events.payloads.tombstones import Stage

SERVICE = "enrichment"
Answer = list[Envelope[Any]] | Exception


class Tombstones:
    """Handles `record.tombstoned`, alone or as a run."""

    def __init__(
        self,
        knowledge: KnowledgeBase,
        schema: Schema,
        vectors: KnowledgeIndex | None,
        sections: SectionVectors | None,
    ) -> None:
        self.knowledge = knowledge
        self.schema = schema
        self.vectors = vectors
        self.sections = sections

    async def one(self, event: Envelope[RecordTombstoned]) -> list[Envelope[Any]]:
        """One tombstone: a run of one."""
        [answer] = await self.many([event])
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def many(self, events: list[Envelope[RecordTombstoned]]) -> list[Answer]:
        """Per input, its events (acknowledgement last) or why it failed."""
        entity_ids = await self._entity_ids(events)
        known = await self._existing(events, entity_ids)
        positions = [i for i, e in enumerate(events) if (e.tenant_id, entity_ids[i]) in known]
        seen: dict[Key, set[str]] = defaultdict(set)
        steps = [self._step(events[i], str(entity_ids[i]), seen) for i in positions]
        changed = await change_many(self.knowledge, steps, known)
        await self._drop_vectors(steps, changed, seen, events)
        answers: list[Answer] = [self._acks(e, [], touched=False) for e in events]
        for i, result in zip(positions, changed, strict=True):
            answers[i] = result.events if isinstance(result, Owed) else result
        return answers

    async def _entity_ids(self, events: list[Envelope[RecordTombstoned]]) -> list[str | None]:
        """The entity each tombstone names, else the one its record was seen about."""
        unnamed: dict[str, list[str]] = defaultdict(list)
        for e in events:
            if not e.payload.entity_id:
                unnamed[e.tenant_id].append(e.payload.record_id)
        about = {
            tenant: await self.knowledge.store.entities_of_records(tenant, records)
            for tenant, records in unnamed.items()
        }
        return [
            e.payload.entity_id or about.get(e.tenant_id, {}).get(e.payload.record_id)
            for e in events
        ]

    async def _existing(
        self, events: list[Envelope[RecordTombstoned]], entity_ids: list[str | None]
    ) -> dict[Key, dict[str, Any]]:
        """Entities that exist, as read (a tombstone never creates one)."""
        found: dict[Key, dict[str, Any]] = {}
        for tenant in dict.fromkeys(e.tenant_id for e in events):
            wanted = [
                eid for e, eid in zip(events, entity_ids, strict=True) if e.tenant_id == tenant
            ]
            ids = list(dict.fromkeys(eid for eid in wanted if eid))
            if ids:
                docs = await self.knowledge.store.load_many(tenant, ids)
                found.update({(tenant, eid): doc for eid, doc in docs.items()})
        return found

    def _step(
        self, event: Envelope[RecordTombstoned], entity_id: str, seen: dict[Key, set[str]]
    ) -> Step:
        """The record leaves the entity's support; what it owes is read right after."""
        tomb = event.payload
        cause = str(event.event_id)
        at = as_utc(event.occurred_at)
        why = f"record {tomb.record_id} was tombstoned ({tomb.reason})"

        def mutate(entity: Entity) -> None:
            retract_record(entity, tomb.record_id, tomb.last_revision, at)
            reconcile(entity, self.schema, cause=cause, at=at, why=why)

        def owes(entity: Entity) -> Owed:
            seen[(entity.tenant_id, entity.entity_id)].update(entity.sections)
            events = announcements(
                entity,
                cause=cause,
                caused_by=event,
                because_record_id=tomb.record_id,
                prune_job_id=tomb.prune_job_id,
            )
            withdrawn = withdrawn_by(entity, cause)
            gone = list(withdrawn)
            if self.vectors is not None:
                active, removed = changed_by(entity, cause)
                events += embedding_request(entity, cause=cause, caused_by=event)
                events += section_embedding_request(entity, active, cause=cause, caused_by=event)
                gone += removed
            touched = any(f.last_cause == cause for f in entity.facts.values())
            return Owed(events + self._acks(event, withdrawn, touched=touched), gone)

        return Step(
            tenant_id=event.tenant_id,
            entity_id=entity_id,
            entity_type="unknown",
            mutate=mutate,
            cause=cause,
            at=at,
            owes=owes,
        )

    def _acks(
        self, event: Envelope[RecordTombstoned], withdrawn: list[str], *, touched: bool
    ) -> list[Envelope[Any]]:
        """The prune job's acknowledgement for this record, when it came from a job."""
        tomb = event.payload
        if not tomb.prune_job_id:
            return []
        counts: dict[Stage, int] = {"facts": len(withdrawn), "articles": 1 if touched else 0}
        if self.vectors is not None:
            counts["vectors"] = len(withdrawn)
        return [
            tombstone_applied(
                event,
                prune_job_id=tomb.prune_job_id,
                service=SERVICE,
                counts=counts,
                tombstoned_ids=sorted(withdrawn),
                source_ids=[tomb.record_id],
            )
        ]

    async def _drop_vectors(
        self,
        steps: list[Step],
        results: list[Owed | Exception],
        seen: dict[Key, set[str]],
        events: list[Envelope[RecordTombstoned]],
    ) -> None:
        """Delete withdrawn facts', removed sections' and citing sections' vectors, per tenant;
        a failure fails that tenant's inputs."""
        if self.vectors is None or self.sections is None:
            return
        for tenant in dict.fromkeys(step.tenant_id for step in steps):
            mine = [i for i, s in enumerate(steps) if s.tenant_id == tenant]
            gone = [v for i in mine if isinstance(r := results[i], Owed) for v in r.gone_vectors]
            sections = sorted({s for (t, _), ids in seen.items() if t == tenant for s in ids})
            retracted = [e.payload.record_id for e in events if e.tenant_id == tenant]
            try:
                gone += await self.sections.citing_ids(tenant, sections, retracted)
                await self.vectors.remove(tenant, list(dict.fromkeys(gone)))
            except Exception as exc:
                for i in mine:
                    results[i] = exc
