"""Every event type in the contract, keyed by its aggregate id (docs/architecture.md lists them)."""

from typing import Any

from engram_events.payloads.conversations import ConversationDeleted, ConversationSubmitted
from engram_events.payloads.documents import (
    DocumentDeleted,
    DocumentExtracted,
    DocumentExtractionFailed,
    DocumentIngested,
    DocumentSubmitted,
    DocumentTombstoned,
)
from engram_events.payloads.embeddings import EmbeddingComputed, EmbeddingRequested
from engram_events.payloads.knowledge import (
    ContradictionOpened,
    ContradictionResolved,
    FactChanged,
    FactWithdrawn,
)
from engram_events.payloads.memories import (
    AgentDeleted,
    MemoryRejected,
    MemoryStored,
    MemoryWithdrawn,
    MemoryWriteRequested,
)
from engram_events.payloads.passages import PassagesWithdrawn, PassageUpserted
from engram_events.payloads.prune import PruneRequested
from engram_events.payloads.records import (
    FactEditRequested,
    RecordsImportRequested,
    RecordsRestoreRequested,
    RecordTombstoned,
    RecordUpserted,
)
from engram_events.payloads.tombstones import TombstoneApplied
from engram_events.registry import EventType, P, register
from engram_events.topics import Topics

DOCUMENT_SUBMITTED = register(
    EventType("document.submitted", DocumentSubmitted, Topics.DOCUMENTS, lambda p: p.document_id)
)
DOCUMENT_DELETED = register(
    EventType("document.deleted", DocumentDeleted, Topics.DOCUMENTS, lambda p: p.document_id)
)
DOCUMENT_INGESTED = register(
    EventType("document.ingested", DocumentIngested, Topics.DOCUMENTS, lambda p: p.document_id)
)
DOCUMENT_TOMBSTONED = register(
    EventType("document.tombstoned", DocumentTombstoned, Topics.DOCUMENTS, lambda p: p.document_id)
)
RECORD_UPSERTED = register(
    EventType("record.upserted", RecordUpserted, Topics.RECORD_EVENTS, lambda p: p.record_id)
)
RECORD_TOMBSTONED = register(
    EventType("record.tombstoned", RecordTombstoned, Topics.RECORD_EVENTS, lambda p: p.record_id)
)
RECORDS_IMPORT_REQUESTED = register(
    EventType(
        "records.import_requested",
        RecordsImportRequested,
        Topics.RECORD_EVENTS,
        lambda p: p.import_id,
    )
)
FACT_EDIT_REQUESTED = register(
    EventType("fact.edit_requested", FactEditRequested, Topics.RECORD_EVENTS, lambda p: p.entity_id)
)
"""A curator's edit of a fact, accepted by the gateway; extraction keeps it as a `human` record."""
RECORDS_RESTORE_REQUESTED = register(
    EventType(
        "records.restore_requested",
        RecordsRestoreRequested,
        Topics.RECORD_EVENTS,
        lambda p: p.source_item,
    )
)
"""An import's records of one source item, kept as the export held them (no extraction); keyed
by the source item, so its batches are applied in order against its manifest."""
PRUNE_REQUESTED = register(
    EventType("prune.requested", PruneRequested, Topics.PRUNE, lambda p: p.prune_job_id)
)
EMBEDDING_REQUESTED = register(
    EventType("embedding.requested", EmbeddingRequested, Topics.EMBEDDINGS, lambda p: p.request_id)
)
PACKED_VECTORS = frozenset({1, 2})
"""An embedding answer's versions: 2 packs each vector (`payloads.vectors`), 1 (still read)
lists its numbers."""
EMBEDDING_COMPUTED = register(
    EventType(
        "embedding.computed",
        EmbeddingComputed,
        Topics.EMBEDDINGS,
        lambda p: p.request_id,
        recipient=lambda p: p.requester,
        versions=PACKED_VECTORS,
    )
)
MEMORY_WRITE_REQUESTED = register(
    EventType("memory.write_requested", MemoryWriteRequested, Topics.MEMORIES, lambda p: p.agent_id)
)
MEMORY_STORED = register(
    EventType("memory.stored", MemoryStored, Topics.MEMORY_OUTCOMES, lambda p: p.agent_id)
)
"""Memory outcomes have a topic of their own, which the memory service does not read: on its
inputs' topic, a bulk load's answers queued in front of other tenants' single writes."""
MEMORY_REJECTED = register(
    EventType("memory.rejected", MemoryRejected, Topics.MEMORY_OUTCOMES, lambda p: p.agent_id)
)
MEMORY_WITHDRAWN = register(
    EventType("memory.withdrawn", MemoryWithdrawn, Topics.MEMORY_OUTCOMES, lambda p: p.agent_id)
)
FACT_CHANGED = register(
    EventType("fact.changed", FactChanged, Topics.KNOWLEDGE, lambda p: p.entity_id)
)
FACT_WITHDRAWN = register(
    EventType("fact.withdrawn", FactWithdrawn, Topics.KNOWLEDGE, lambda p: p.entity_id)
)
CONTRADICTION_OPENED = register(
    EventType("contradiction.opened", ContradictionOpened, Topics.KNOWLEDGE, lambda p: p.entity_id)
)
TOMBSTONE_APPLIED = register(
    EventType("tombstone.applied", TombstoneApplied, Topics.TOMBSTONES, lambda p: p.prune_job_id)
)
CONTRADICTION_RESOLVED = register(
    EventType(
        "contradiction.resolved", ContradictionResolved, Topics.KNOWLEDGE, lambda p: p.entity_id
    )
)
RECORD_STATE = register(
    EventType("record.state", RecordUpserted, Topics.RECORDS, lambda p: p.record_id)
)
"""A record's latest state on the compacted records topic (a null value there is its tombstone)."""
DOCUMENT_EXTRACTED = register(
    EventType("document.extracted", DocumentExtracted, Topics.DOCUMENTS, lambda p: p.document_id)
)
DOCUMENT_EXTRACTION_FAILED = register(
    EventType(
        "document.extraction_failed",
        DocumentExtractionFailed,
        Topics.DOCUMENTS,
        lambda p: p.document_id,
    )
)
AGENT_DELETED = register(
    EventType(
        "agent.deleted",
        AgentDeleted,
        Topics.MEMORIES,
        lambda p: p.agent_id,
    )
)
"""An agent was deleted at the gateway; the memory service withdraws its memories."""
CONVERSATION_SUBMITTED = register(
    EventType(
        "conversation.submitted",
        ConversationSubmitted,
        Topics.MEMORIES,
        lambda p: p.agent_id,
    )
)
"""An agent's conversation, accepted by the gateway; the memory service turns it into memories."""
CONVERSATION_DELETED = register(
    EventType(
        "conversation.deleted",
        ConversationDeleted,
        Topics.MEMORIES,
        lambda p: p.agent_id,
    )
)
"""A conversation deleted at the gateway (keyed like its submission, so it comes after it)."""
PASSAGE_UPSERTED = register(
    EventType(
        "passage.upserted",
        PassageUpserted,
        Topics.RECORD_EVENTS,
        lambda p: p.document_id,
    )
)
"""A passage of a prose document version, durable in extraction; keyed by its document, so a
document's passages stay in order on one partition. Enrichment indexes it for search."""
PASSAGES_WITHDRAWN = register(
    EventType(
        "passages.withdrawn",
        PassagesWithdrawn,
        Topics.RECORD_EVENTS,
        lambda p: p.document_id,
    )
)
"""Passages a new version replaced or a deletion took, keyed like their upserts so they follow
them; enrichment deletes their rows and vectors and acknowledges a prune job's."""
MEMORY_BULK_WRITE_REQUESTED = register(
    EventType(
        "memory.bulk_write_requested",
        MemoryWriteRequested,
        Topics.MEMORIES_BULK,
        lambda p: p.agent_id,
    )
)
"""A `memories:batch` write: `memory.write_requested` on the bulk lane, so a bulk load queues
behind itself and never in front of another tenant's single writes."""
EMBEDDING_BULK_REQUESTED = register(
    EventType(
        "embedding.bulk_requested",
        EmbeddingRequested,
        Topics.EMBEDDINGS_BULK,
        lambda p: p.request_id,
    )
)
"""The embedding request of a bulk-lane write (answered on the same lane)."""
EMBEDDING_BULK_COMPUTED = register(
    EventType(
        "embedding.bulk_computed",
        EmbeddingComputed,
        Topics.EMBEDDINGS_BULK,
        lambda p: p.request_id,
        recipient=lambda p: p.requester,
        versions=PACKED_VECTORS,
    )
)
"""The answer to `embedding.bulk_requested`."""
BULK_LANE: dict[str, EventType[Any]] = {
    MEMORY_WRITE_REQUESTED.name: MEMORY_BULK_WRITE_REQUESTED,
    EMBEDDING_REQUESTED.name: EMBEDDING_BULK_REQUESTED,
    EMBEDDING_COMPUTED.name: EMBEDDING_BULK_COMPUTED,
}
"""Each interactive event type with a bulk lane, to its bulk-lane twin (same payload)."""
BULK_TYPES = frozenset(t.name for t in BULK_LANE.values())
ANSWERED: dict[str, str] = {EMBEDDING_REQUESTED.name: EMBEDDING_COMPUTED.name}
"""Each interactive request another service answers back to its requester, to its answer: while
one is out, the requester's bulk lane waits for it as for an interactive batch in flight."""
ANSWERS = frozenset(ANSWERED.values())


def in_lane_of(event_type: EventType[P], cause: str) -> EventType[P]:
    """`event_type`, or its bulk-lane twin when the event `cause` names travelled that lane."""
    return BULK_LANE.get(event_type.name, event_type) if cause in BULK_TYPES else event_type
