"""The memory service's handlers: one typed input each, returning the events to publish."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope
from engram_events.acks import merge_acknowledgements
from engram_events.payloads.conversations import ConversationDeleted, ConversationSubmitted
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.documents import DocumentTombstoned
from engram_events.payloads.embeddings import EmbeddingComputed
from engram_events.payloads.knowledge import FactWithdrawn
from engram_events.payloads.memories import AgentDeleted, MemoryWriteRequested
from engram_events.payloads.records import RecordTombstoned
from engram_memory.domain.sources import Gone
from engram_memory.service.cascades import Cascades
from engram_memory.service.conversations import ConversationIntake
from engram_memory.service.inline import InlineEmbedding
from engram_memory.service.storing import Storing
from engram_memory.service.writes import Writes


class MemoryHandlers:
    """Validate before embedding, store after embedding, withdraw when sources go."""

    def __init__(
        self,
        writes: Writes,
        storing: Storing,
        cascades: Cascades,
        inline: InlineEmbedding | None = None,
    ) -> None:
        self.writes = writes
        self.storing = storing
        self.cascades = cascades
        self.inline = inline
        """Single writes embedded and stored in their first pass, when set."""

    async def on_write_requested(
        self, event: Envelope[MemoryWriteRequested]
    ) -> list[Envelope[Any]]:
        """Check the content itself; only valid content is sent to the embedder."""
        [result] = await self.writes.requested([event])
        return result

    async def on_writes_requested(
        self, events: list[Envelope[MemoryWriteRequested]]
    ) -> list[list[Envelope[Any]]]:
        """The batch route of `memory.write_requested`: each input's answer as if handled alone."""
        return await self.writes.requested(events)

    async def on_single_write(self, event: Envelope[MemoryWriteRequested]) -> list[Envelope[Any]]:
        """A single write (the interactive lane): stored in this pass when embedded inline."""
        [result] = await self.on_single_writes([event])
        return result

    async def on_single_writes(
        self, events: list[Envelope[MemoryWriteRequested]]
    ) -> list[list[Envelope[Any]]]:
        """The batch route of the interactive lane's writes."""
        if self.inline is None:
            return await self.writes.requested(events)
        return await self.inline.requested(events)

    async def on_write_dead_lettered(
        self, event: Envelope[MemoryWriteRequested], letter: DeadLetter
    ) -> list[Envelope[Any]]:
        """A write the consumer gave up on still ends somewhere its writer can see."""
        return await self.writes.dead_lettered(event, letter)

    async def on_computed(self, event: Envelope[EmbeddingComputed]) -> list[Envelope[Any]]:
        """Write the point and the row for each vector of ours, then announce and retain."""
        [result] = await self.storing.computed([event])
        return result

    async def on_computed_dead_lettered(
        self, event: Envelope[EmbeddingComputed], letter: DeadLetter
    ) -> list[Envelope[Any]]:
        """Vectors that could not be stored still leave their memories somewhere visible."""
        return await self.storing.dead_lettered(event, letter)

    async def on_computed_many(
        self, events: list[Envelope[EmbeddingComputed]]
    ) -> list[list[Envelope[Any]]]:
        """The batch route of `embedding.computed`."""
        return await self.storing.computed(events)

    async def on_record_tombstoned(self, event: Envelope[RecordTombstoned]) -> list[Envelope[Any]]:
        """Memories derived from a pruned record follow it."""
        return (await self.cascades.sources_gone([_record_gone(event)]))[0]

    async def on_records_tombstoned(
        self, events: list[Envelope[RecordTombstoned]]
    ) -> list[list[Envelope[Any]] | BaseException]:
        """The batch route of `record.tombstoned`: a prune brings one per record, and its job
        one acknowledgement per batch."""
        gone = await self.cascades.sources_gone([_record_gone(e) for e in events])
        return merge_acknowledgements(gone)

    async def on_fact_withdrawn(self, event: Envelope[FactWithdrawn]) -> list[Envelope[Any]]:
        """Memories derived from a withdrawn fact follow it."""
        return (await self.cascades.sources_gone([_fact_gone(event)]))[0]

    async def on_facts_withdrawn(
        self, events: list[Envelope[FactWithdrawn]]
    ) -> list[list[Envelope[Any]] | BaseException]:
        """The batch route of `fact.withdrawn`: a prune brings one per fact, and its job one
        acknowledgement per batch."""
        return merge_acknowledgements(
            await self.cascades.sources_gone([_fact_gone(e) for e in events])
        )

    async def on_document_tombstoned(
        self, event: Envelope[DocumentTombstoned]
    ) -> list[Envelope[Any]]:
        """Memories derived from a deleted document follow it."""
        gone = Gone(event, event.payload.document_id, event.payload.prune_job_id, "documents")
        return (await self.cascades.sources_gone([gone]))[0]

    async def on_agent_deleted(self, event: Envelope[AgentDeleted]) -> list[Envelope[Any]]:
        """A deleted agent's memories are withdrawn (rows keep status and hashes)."""
        return await self.cascades.agent_deleted(event.tenant_id, event.payload.agent_id, event)


class ConversationHandlers:
    """`conversation.submitted` and `conversation.deleted`, for the memory service."""

    def __init__(self, intake: ConversationIntake) -> None:
        self.intake = intake

    async def on_submitted(self, event: Envelope[ConversationSubmitted]) -> list[Envelope[Any]]:
        """Store the conversation, then stage its memory writes."""
        return await self.intake.submitted(event)

    async def on_submitted_dead_lettered(
        self, event: Envelope[ConversationSubmitted], letter: DeadLetter
    ) -> list[Envelope[Any]]:
        """A submission the consumer gave up on still settles, `failed`, with the reason."""
        return await self.intake.dead_lettered(event, letter)

    async def on_deleted(self, event: Envelope[ConversationDeleted]) -> list[Envelope[Any]]:
        """The conversation's texts go; every memory derived from it is withdrawn."""
        return await self.intake.deleted(event)


def _record_gone(event: Envelope[RecordTombstoned]) -> Gone:
    """A pruned record, as a source gone."""
    return Gone(event, event.payload.record_id, event.payload.prune_job_id, "records")


def _fact_gone(event: Envelope[FactWithdrawn]) -> Gone:
    """A withdrawn fact, as a source gone."""
    return Gone(event, event.payload.fact_id, event.payload.prune_job_id, "facts")
