"""Enrichment's handlers: one typed input each, returning the events its durable writes owe."""

from __future__ import annotations

from typing import Any

from engram_enrichment.domain.schema import Schema
from engram_enrichment.ports import KnowledgeIndex, PassageRows
from engram_enrichment.service.embeddings import ComputedVectors
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.passages import PassageIndexing
from engram_enrichment.service.records import RecordChanges
from engram_enrichment.service.section_vectors import SectionVectors
from engram_enrichment.service.tombstones import Tombstones
from engram_events import Envelope
from engram_events.acks import merge_acknowledgements
from engram_events.payloads.embeddings import EmbeddingComputed
from engram_events.payloads.passages import PassagesWithdrawn, PassageUpserted
from engram_events.payloads.records import RecordTombstoned, RecordUpserted

SERVICE = "enrichment"


class EnrichmentHandlers:
    """Records in, facts out; every announced change has been read back from the database."""

    def __init__(
        self,
        knowledge: KnowledgeBase,
        schema: Schema,
        vectors: KnowledgeIndex | None = None,
        passages: PassageRows | None = None,
    ) -> None:
        self.knowledge = knowledge
        self.passages = PassageIndexing(passages, vectors) if passages is not None else None
        self.sections = SectionVectors(vectors, knowledge) if vectors is not None else None
        self.records = RecordChanges(knowledge, schema, vectors, self.sections)
        self.tombstones = Tombstones(knowledge, schema, vectors, self.sections)
        self.computed = (
            ComputedVectors(knowledge, vectors, self.sections, self.passages)
            if vectors is not None and self.sections is not None
            else None
        )

    async def on_record_upserted(self, event: Envelope[RecordUpserted]) -> list[Envelope[Any]]:
        """Move the record's support to the values of this revision; stale revisions change nothing."""
        return await self.records.one(event)

    async def on_record_upserted_batch(
        self, events: list[Envelope[RecordUpserted]]
    ) -> list[list[Envelope[Any]] | Exception]:
        """The batch route: per record, its events or why it failed (retried alone)."""
        return await self.records.many(events)

    async def on_record_tombstoned(self, event: Envelope[RecordTombstoned]) -> list[Envelope[Any]]:
        """Remove the record from every fact's support; withdraw emptied facts; ack a prune."""
        return await self.tombstones.one(event)

    async def on_record_tombstoned_batch(
        self, events: list[Envelope[RecordTombstoned]]
    ) -> list[list[Envelope[Any]] | BaseException]:
        """The batch route: a prune brings one tombstone per record, and its job one
        acknowledgement per batch."""
        return merge_acknowledgements(await self.tombstones.many(events))

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
        if self.computed is None:
            return [[] for _ in events]
        return await self.computed.store(events)

    async def on_passage_upserted(self, event: Envelope[PassageUpserted]) -> list[Envelope[Any]]:
        """Keep the passage and ask for its vector (nothing without knowledge search)."""
        [result] = await self.on_passage_upserted_batch([event])
        if isinstance(result, Exception):
            raise result
        return result

    async def on_passage_upserted_batch(
        self, events: list[Envelope[PassageUpserted]]
    ) -> list[list[Envelope[Any]] | Exception]:
        """The batch route: a document brings many passages, kept with one write per tenant."""
        if self.passages is None or self.passages.vectors is None:
            return [[] for _ in events]
        return await self.passages.upserted(events)

    async def on_passages_withdrawn(
        self, event: Envelope[PassagesWithdrawn]
    ) -> list[Envelope[Any]]:
        """Delete the passages' rows and vectors; acknowledge a prune job's document."""
        if self.passages is None:
            return []
        return await self.passages.withdrawn(event)
