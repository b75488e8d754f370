"""The events the memory service publishes (announcements and its embedding requests), with ids
derived from their cause (replay-safe)."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import (
    EMBEDDING_COMPUTED,
    EMBEDDING_REQUESTED,
    MEMORY_REJECTED,
    MEMORY_STORED,
    MEMORY_WITHDRAWN,
    in_lane_of,
)
from engram_events.payloads.embeddings import (
    EmbeddedItem,
    EmbeddingComputed,
    EmbeddingRequested,
    TextItem,
    VectorProvenance,
)
from engram_events.payloads.memories import (
    MemoryRejected,
    MemoryStored,
    MemoryWithdrawn,
    MemoryWriteRequested,
    WithdrawReason,
)
from engram_memory.domain.rows import MemoryRow

REQUESTER = "memory"
"""How the memory service names itself in embedding requests (and recognises its results)."""
EMBED = "embed"
"""What a write's embedding request (or its carried vector's answer) derives its id with."""


def answers_write(row: MemoryRow, result: Envelope[Any]) -> bool:
    """Whether an embedding result answers the very write event that opened the row (its
    request's, or its own carried vector): only that result, replayed, finishes the row's store
    again; a result for a later write of the same memory (an idempotent retry) does not."""
    written = row.written_by
    if written is None or result.causation_id is None:
        return False
    return str(result.causation_id) in (written, str(derive_event_id(written, EMBED)))


def embedding_request(event: Envelope[MemoryWriteRequested]) -> Envelope[Any]:
    """The request for a pending memory's vector, with an id derived from its write request, on
    the lane the write came by (a bulk write's waits behind bulk writes only)."""
    request = event.payload
    embed = EmbeddingRequested(
        request_id=request.memory_id,
        requester=REQUESTER,
        purpose="memory",
        items=[TextItem(item_id=request.memory_id, text=request.content)],
    )
    return new_event(
        in_lane_of(EMBEDDING_REQUESTED, event.event_type),
        embed,
        tenant_id=event.tenant_id,
        caused_by=event,
        event_id=derive_event_id(event.event_id, EMBED),
    )


def carried_vector(event: Envelope[MemoryWriteRequested]) -> Envelope[Any]:
    """An imported memory's own vector as the answer to the request it needs no more: stored
    the way any computed vector is, with no model call."""
    request = event.payload
    assert request.vector is not None and request.vector_provenance is not None
    computed = EmbeddingComputed(
        request_id=request.memory_id,
        requester=REQUESTER,
        purpose="memory",
        items=[EmbeddedItem(item_id=request.memory_id, vector=request.vector)],
        provenance=request.vector_provenance,
    )
    return new_event(
        in_lane_of(EMBEDDING_COMPUTED, event.event_type),
        computed,
        tenant_id=event.tenant_id,
        caused_by=event,
        event_id=derive_event_id(event.event_id, EMBED),
    )


def rejected(
    row: MemoryRow, reason: str, cause: Envelope[Any], duplicate_of: str | None = None
) -> Envelope[Any]:
    """`memory.rejected` for a row, caused by the event that decided it."""
    return new_event(
        MEMORY_REJECTED,
        MemoryRejected(
            memory_id=row.memory_id,
            agent_id=row.agent_id,
            reason=reason,
            duplicate_of=duplicate_of,
        ),
        tenant_id=row.tenant_id,
        caused_by=cause,
        event_id=derive_event_id(cause.event_id, f"rejected:{row.memory_id}"),
    )


def stored(row: MemoryRow, provenance: VectorProvenance, cause: Envelope[Any]) -> Envelope[Any]:
    """`memory.stored` once the row and the point are durable."""
    return new_event(
        MEMORY_STORED,
        MemoryStored(
            memory_id=row.memory_id,
            agent_id=row.agent_id,
            type=row.type,
            content_sha256=row.content_sha256,
            provenance=provenance,
            derived_from=list(row.derived_from),
            supersedes=row.supersedes,
            user_id=row.user_id,
            session_id=row.session_id,
        ),
        tenant_id=row.tenant_id,
        caused_by=cause,
        event_id=derive_event_id(cause.event_id, f"stored:{row.memory_id}"),
    )


def withdrawn(
    row: MemoryRow,
    reason: WithdrawReason,
    cause: Envelope[Any] | None,
    *,
    because_of: str | None = None,
    prune_job_id: str | None = None,
) -> Envelope[Any]:
    """`memory.withdrawn`; without a cause event the id derives from the memory and reason."""
    payload = MemoryWithdrawn(
        memory_id=row.memory_id,
        agent_id=row.agent_id,
        reason=reason,
        content_sha256=row.content_sha256,
        prune_job_id=prune_job_id,
        because_of=because_of,
    )
    seed = cause.event_id if cause else f"{row.tenant_id}:{row.memory_id}:{reason}"
    event_id = derive_event_id(seed, f"withdrawn:{row.memory_id}")
    return new_event(
        MEMORY_WITHDRAWN,
        payload,
        tenant_id=row.tenant_id,
        caused_by=cause,
        event_id=event_id,
    )
