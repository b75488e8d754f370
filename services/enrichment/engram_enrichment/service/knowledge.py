"""Changing an entity: load, apply pure logic, write, read back, and only then announce."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engram_enrichment.domain.article import render
from engram_enrichment.domain.changes import snapshot, stamp
from engram_enrichment.domain.model import Entity
from engram_enrichment.domain.relations import relation_changes
from engram_enrichment.domain.sections import refresh_sections
from engram_enrichment.domain.stored import from_document, to_document, unconfirmed
from engram_enrichment.ports import EntityStore, RelationRows
from engram_enrichment.service.summaries import Summaries

log = logging.getLogger(__name__)
LOAD_CHUNK = 2000
"""Entities per read: one `_id $in`."""
LOADS_IN_FLIGHT = 2

Mutation = Callable[[Entity], None]


class NotApplied(Exception):
    """A write did not read back as written; nothing it carried may be reported as applied."""

    def __init__(self, entity_key: str, failed: list[str], total: int) -> None:
        super().__init__(
            f"{len(failed)} of {total} updates to {entity_key} did not read back: "
            + ", ".join(failed[:20])
        )
        self.failed = failed


@dataclass
class Outcome:
    """The read-back entity and, per fact, whether this cause changed it durably."""

    entity: Entity
    written: bool
    applied: dict[str, str] = field(default_factory=dict)


class KnowledgeBase:
    """The one path every change takes, from the consumer and from the API alike."""

    def __init__(
        self,
        store: EntityStore,
        summaries: Summaries | None = None,
        relations: RelationRows | None = None,
    ) -> None:
        self.store = store
        self.summaries = summaries or Summaries()
        self.relations = relations

    async def load(self, tenant_id: str, entity_id: str) -> Entity | None:
        """The entity as stored now."""
        doc = await self.store.load(tenant_id, entity_id)
        return from_document(doc) if doc else None

    async def load_many(self, tenant_id: str, entity_ids: Sequence[str]) -> list[Entity]:
        """Stored entities in the order asked, missing ones left out; thousands per trip."""
        docs = await self.stored_many(tenant_id, entity_ids)
        return [from_document(docs[e]) for e in entity_ids if e in docs]

    async def stored_many(
        self, tenant_id: str, entity_ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """The stored documents of those entities that exist, by entity id, unvalidated (a
        check that reads thousands skips building models); thousands per trip, two trips
        in flight, so one chunk is unpacked while the server reads the next."""
        in_flight = asyncio.Semaphore(LOADS_IN_FLIGHT)

        async def chunk(start: int) -> dict[str, dict[str, Any]]:
            async with in_flight:
                return await self.store.load_many(tenant_id, entity_ids[start : start + LOAD_CHUNK])

        docs: dict[str, dict[str, Any]] = {}
        for part in await asyncio.gather(*map(chunk, range(0, len(entity_ids), LOAD_CHUNK))):
            docs.update(part)
        return docs

    async def entities_of_records(self, tenant_id: str, record_ids: Sequence[str]) -> list[Entity]:
        """The stored entities the records were about, by entity id."""
        docs = await self.stored_of_records(tenant_id, record_ids)
        return [from_document(docs[entity_id]) for entity_id in sorted(docs)]

    async def stored_of_records(
        self, tenant_id: str, record_ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """The stored documents of the entities the records were about, by entity id."""
        about = await self.store.entities_of_records(tenant_id, record_ids)
        return await self.stored_many(tenant_id, sorted(set(about.values())))

    async def change(
        self,
        tenant_id: str,
        entity_id: str,
        entity_type: str,
        mutate: Mutation,
        *,
        cause: str,
        at: datetime,
    ) -> Outcome:
        """Apply `mutate`; returns what was durably written, or raises NotApplied/ConcurrentUpdate."""
        before = await self.load(tenant_id, entity_id)
        after = (
            before.model_copy(deep=True)
            if before
            else Entity(tenant_id=tenant_id, entity_id=entity_id, entity_type=entity_type)
        )
        mutate(after)
        stamp(snapshot(before), after, cause=cause, at=at)
        await self.summaries.refresh(after)
        after.article = render(after)
        refresh_sections(after, cause)
        written = before is None or before.state() != after.state()
        stored = before
        if written:
            after.version = (before.version if before else 0) + 1
            intended = to_document(after)
            await self.store.save(tenant_id, intended, before.version if before else 0)
            raw = await self.store.load(tenant_id, entity_id)
            failed = unconfirmed(intended, raw)
            if failed or raw is None:
                log.warning(
                    "entity write not confirmed",
                    extra={
                        "tenant_id": tenant_id,
                        "entity_id": entity_id,
                        "failed_count": len(failed),
                    },
                )
                raise NotApplied(f"{tenant_id}:{entity_id}", failed or ["entity"], len(after.facts))
            stored = from_document(raw)
        assert stored is not None
        await self._index(stored, cause)
        applied = {
            fid: "applied" if fact.last_cause == cause else "unchanged"
            for fid, fact in stored.facts.items()
        }
        return Outcome(entity=stored, written=written, applied=applied)

    async def _index(self, entity: Entity, cause: str) -> None:
        """Refresh the listing copies of the contradictions and relations this cause touched."""
        docs = contradiction_docs(entity, {cause})
        if docs:
            await self.store.index_contradictions(entity.tenant_id, docs)
        await self.index_relations(entity.tenant_id, [(entity, {cause})])

    async def index_relations(
        self, tenant_id: str, touched: Sequence[tuple[Entity, set[str]]]
    ) -> None:
        """Write the live relations these causes touched and delete the ones they withdrew;
        after the entity write, so a replay (which finds the stamps) writes them again."""
        if self.relations is None:
            return
        rows: list[dict[str, Any]] = []
        gone: list[str] = []
        for entity, causes in touched:
            live, withdrawn = relation_changes(entity, causes)
            rows += live
            gone += withdrawn
        await self.relations.remove(tenant_id, gone)
        await self.relations.put(tenant_id, rows)


def contradiction_docs(entity: Entity, causes: set[str]) -> list[dict[str, Any]]:
    """Listing copies of the entity's contradictions last touched by one of these causes."""
    return [
        {
            **item.model_dump(mode="json"),
            "entity_id": entity.entity_id,
            "entity_type": entity.entity_type,
        }
        for item in entity.contradictions.values()
        if item.last_cause in causes
    ]
