"""Topic names: one per stream, versioned; a breaking change is a new topic."""

from enum import StrEnum


class Topics(StrEnum):
    """Every Kafka topic in the contract (docs/architecture.md, Topics)."""

    DOCUMENTS = "engram.documents.v1"
    RECORDS = "engram.records.v1"
    RECORD_EVENTS = "engram.record-events.v1"
    EMBEDDINGS = "engram.embeddings.v1"
    EMBEDDINGS_BULK = "engram.embeddings-bulk.v1"
    MEMORIES = "engram.memories.v1"
    MEMORIES_BULK = "engram.memories-bulk.v1"
    MEMORY_OUTCOMES = "engram.memory-outcomes.v1"
    KNOWLEDGE = "engram.knowledge.v1"
    TOMBSTONES = "engram.tombstones.v1"
    PRUNE = "engram.prune.v1"
    DLQ = "engram.dlq.v1"


ALL_TOPICS: tuple[str, ...] = tuple(t.value for t in Topics)
COMPACTED_TOPICS: frozenset[str] = frozenset({Topics.RECORDS.value})
BULK_TOPICS: frozenset[str] = frozenset({Topics.MEMORIES_BULK.value, Topics.EMBEDDINGS_BULK.value})
"""The bulk lane: consumers read these apart from the rest, so a backlog here delays nothing else."""


def topic_name(base: str, prefix: str = "") -> str:
    """The physical topic for a contract topic; a prefix isolates tests and tenants of a cluster."""
    return f"{prefix}{base}" if prefix else base
