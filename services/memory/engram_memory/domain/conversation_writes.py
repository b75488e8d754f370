"""The memory writes a conversation asks for, derived from its record alone: the same record
stages the same memory and event ids however often it is processed."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.payloads.memories import ExtractedBy, MemoryWriteRequested
from engram_memory.domain.conversation_records import ConversationRecord
from engram_memory.domain.conversations import FACT_TYPE, MESSAGE_TYPE


def _seed(tenant_id: str, conversation_id: str) -> str:
    """What a conversation's outgoing event ids derive from: the conversation, not the event
    that carried it, so a repeated submission stages the very same events."""
    return f"{tenant_id}:conversation:{conversation_id}"


def _write(
    record: ConversationRecord,
    memory_id: str,
    content: str,
    type_: str,
    metadata: dict[str, Any],
    *,
    supersedes: str | None = None,
    extracted_by: ExtractedBy | None = None,
) -> Envelope[Any]:
    """One memory write request derived from a conversation."""
    tenant_id, conversation_id = record.tenant_id, record.conversation_id
    payload = MemoryWriteRequested(
        memory_id=memory_id,
        agent_id=record.agent_id,
        content=content,
        type=type_,
        metadata={**(record.metadata or {}), **metadata, "conversation_id": conversation_id},
        derived_from=[conversation_id],
        supersedes=supersedes,
        user_id=record.user_id,
        session_id=record.session_id,
        extracted_by=extracted_by,
    )
    return new_event(
        MEMORY_WRITE_REQUESTED,
        payload,
        tenant_id=tenant_id,
        event_id=derive_event_id(_seed(tenant_id, conversation_id), f"write:{memory_id}"),
    )


def message_writes(record: ConversationRecord) -> list[Envelope[Any]]:
    """Without a model: one write per user or assistant message with content."""
    return [
        _write(
            record,
            m.memory_id,
            m.content or "",
            MESSAGE_TYPE,
            {"role": m.role, "message_index": m.index},
        )
        for m in record.messages
        if m.memory_id
    ]


def fact_writes(record: ConversationRecord) -> list[Envelope[Any]]:
    """With a model: one write per fact decided `add` or `supersede`; `skip` writes nothing."""
    writes = []
    for fact in record.facts or ():
        decided = fact.decision
        if decided is None or decided.action == "skip":
            continue
        writes.append(
            _write(
                record,
                fact.memory_id,
                fact.content or "",
                FACT_TYPE,
                {"fact_index": fact.index, "decision": decided.action},
                supersedes=decided.supersedes,
                extracted_by=ExtractedBy(
                    model=decided.model,
                    conversation_id=record.conversation_id,
                    decision=decided.action,
                    output_sha256=decided.output_sha256,
                ),
            )
        )
    return writes
