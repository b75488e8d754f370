"""A caller resolves a contradiction: keep one claim, supersede the others, announce once written."""

from __future__ import annotations

from datetime import UTC, datetime

from engram_enrichment.domain.contradictions import claim_for_value, resolve
from engram_enrichment.domain.ids import value_sha256
from engram_enrichment.domain.model import Entity
from engram_enrichment.ports import ConcurrentUpdate, EventStager
from engram_enrichment.service.announce import announcements
from engram_enrichment.service.knowledge import KnowledgeBase, Outcome
from engram_enrichment.service.section_vectors import SectionVectors
from engram_events.ids import Scalar

RESOLVE_ATTEMPTS = 3


class NoSuchContradiction(LookupError):
    """The tenant holds no contradiction of that id."""


class KeptChanging(Exception):
    """The entity changed under every attempt; the caller may retry."""


class Resolutions:
    """Resolving goes through the same change path as records, then stages what it owes."""

    def __init__(
        self, knowledge: KnowledgeBase, sections: SectionVectors | None, outbox: EventStager
    ) -> None:
        self.knowledge = knowledge
        self.sections = sections
        self.outbox = outbox

    async def resolve(
        self, tenant_id: str, contradiction_id: str, keep: str | None, value: Scalar
    ) -> Entity:
        """Keep the claim named by fact id (or else by value); the entity as written.

        Raises NoSuchContradiction, `ResolutionRefused` or KeptChanging."""
        kb = self.knowledge
        index = await kb.store.contradiction(tenant_id, contradiction_id)
        if index is None:
            raise NoSuchContradiction(contradiction_id)
        entity_id = str(index["entity_id"])
        cause = f"resolve:{tenant_id}:{contradiction_id}"
        now = datetime.now(UTC)
        outcome: Outcome | None = None
        for _ in range(RESOLVE_ATTEMPTS):
            current = await kb.load(tenant_id, entity_id)
            if current is None:
                raise NoSuchContradiction(contradiction_id)
            kept = keep or claim_for_value(current, contradiction_id, value_sha256(value))

            def mutate(entity: Entity, kept: str = kept) -> None:
                resolve(entity, contradiction_id, kept, cause=cause, at=now)

            try:
                outcome = await kb.change(
                    tenant_id, entity_id, "unknown", mutate, cause=cause, at=now
                )
                break
            except ConcurrentUpdate:
                continue
        if outcome is None:
            raise KeptChanging(contradiction_id)
        staged = announcements(outcome.entity, cause=cause)
        if self.sections is not None:
            staged += await self.sections.follow_up(outcome.entity, cause)
        await self.outbox.stage(staged)
        return outcome.entity
