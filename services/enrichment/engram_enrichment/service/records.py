"""A record's revision moves its support to the values it asserts now; stale revisions change
nothing. Alone or as a run (`bulk.change_many`), every announced change has been read back."""

from __future__ import annotations

import logging
from typing import Any

from engram_enrichment.domain.clock import as_utc
from engram_enrichment.domain.contradictions import reconcile
from engram_enrichment.domain.model import Entity, RecordAssertion, curator_edit
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.sections import changed_by
from engram_enrichment.domain.support import assert_record, is_stale
from engram_enrichment.ports import KnowledgeIndex
from engram_enrichment.service.announce import (
    announcements,
    embedding_request,
    section_embedding_request,
    withdrawn_by,
)
from engram_enrichment.service.bulk import Owed, Step, change_many
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.section_vectors import SectionVectors
from engram_events import Envelope
from engram_events.payloads.records import RecordUpserted

log = logging.getLogger(__name__)


class RecordChanges:
    """Applies `record.upserted`, alone or as a run; with recall on, asks for the vectors the
    change owes and drops the ones it made obsolete."""

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

    def _step(self, event: Envelope[RecordUpserted]) -> Step:
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
            passage_ids=list(record.lineage.passage_ids),
            observed_at=as_utc(record.observed_at),
            edit=curator_edit(record.lineage.edit),
            references=list(record.references),
            single_valued=record.type_definition.single_valued if record.type_definition else None,
            valid_from=as_utc(record.valid_from) if record.valid_from else None,
            valid_to=as_utc(record.valid_to) if record.valid_to else None,
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

    async def one(self, event: Envelope[RecordUpserted]) -> list[Envelope[Any]]:
        """One record: its entity changed and read back, then what the change owes."""
        record = event.payload
        step = self._step(event)
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

    async def _follow_up(
        self, entity: Entity, cause: str, event: Envelope[Any]
    ) -> list[Envelope[Any]]:
        """With recall on: embed facts and sections this cause changed, drop what is gone."""
        if self.vectors is None or self.sections is None:
            return []
        await self.vectors.remove(entity.tenant_id, withdrawn_by(entity, cause))
        requests = embedding_request(entity, cause=cause, caused_by=event)
        return requests + await self.sections.follow_up(entity, cause, event)

    async def many(
        self, events: list[Envelope[RecordUpserted]]
    ) -> list[list[Envelope[Any]] | Exception]:
        """Per record, its events or why it failed (retried alone)."""
        steps = [self._step(event) for event in events]
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
