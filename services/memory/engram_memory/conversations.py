"""Conversations: stored as records, turned into memory write requests through the normal write
path (dedup, content floors, supersedes), and withdrawn through the tombstone path.

The record is written first and every step of the model's work is saved in it before the next
(the proposed facts, then each decision), so a retry or a replay never asks the model again
for what it already answered, and the write requests, derived from the record alone, carry
the same memory and event ids however often they are staged. Logs carry ids, counts and
hashes, never text.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.content import ContentLimits
from engram_events.memory_filter import MemoryFilter
from engram_events.payloads.conversations import ConversationDeleted, ConversationSubmitted
from engram_events.payloads.memories import ExtractedBy, MemoryWriteRequested
from engram_memory.adapters.conversations import ConversationStore
from engram_memory.domain.conversations import (
    FACT_TYPE,
    MESSAGE_TYPE,
    ModelOptions,
    decision_request,
    extraction_request,
    fact_entries,
    message_entries,
    read_decision,
    read_facts,
)
from engram_memory.handlers import Gone, MemoryHandlers
from engram_memory.recall import Recall
from engram_platform.chat import ChatModel, ModelFailed
from engram_platform.retry import PermanentError

log = logging.getLogger(__name__)
TEXT_FIELDS = ("content",)


def _seed(tenant_id: str, conversation_id: str) -> str:
    """What a conversation's outgoing event ids derive from: the conversation, not the event
    that carried it, so a repeated submission stages the very same events."""
    return f"{tenant_id}:conversation:{conversation_id}"


def _write(
    record: dict[str, Any],
    memory_id: str,
    content: str,
    type_: str,
    metadata: dict[str, Any],
    *,
    supersedes: str | None = None,
    extracted_by: ExtractedBy | None = None,
) -> Envelope[Any]:
    """One memory write request derived from a conversation."""
    tenant_id, conversation_id = record["tenant_id"], record["conversation_id"]
    payload = MemoryWriteRequested(
        memory_id=memory_id,
        agent_id=record["agent_id"],
        content=content,
        type=type_,
        metadata={**record.get("metadata", {}), **metadata, "conversation_id": conversation_id},
        derived_from=[conversation_id],
        supersedes=supersedes,
        user_id=record.get("user_id"),
        session_id=record.get("session_id"),
        extracted_by=extracted_by,
    )
    return new_event(
        MEMORY_WRITE_REQUESTED,
        payload,
        tenant_id=tenant_id,
        event_id=derive_event_id(_seed(tenant_id, conversation_id), f"write:{memory_id}"),
    )


def message_writes(record: dict[str, Any]) -> list[Envelope[Any]]:
    """Without a model: one write per user or assistant message with content."""
    return [
        _write(
            record,
            m["memory_id"],
            m["content"],
            MESSAGE_TYPE,
            {"role": m["role"], "message_index": m["index"]},
        )
        for m in record["messages"]
        if m.get("memory_id")
    ]


def fact_writes(record: dict[str, Any]) -> list[Envelope[Any]]:
    """With a model: one write per fact decided `add` or `supersede`; `skip` writes nothing."""
    writes = []
    for fact in record.get("facts") or []:
        decision = fact.get("decision")
        if decision not in ("add", "supersede"):
            continue
        writes.append(
            _write(
                record,
                fact["memory_id"],
                fact["content"],
                FACT_TYPE,
                {"fact_index": fact["index"], "decision": decision},
                supersedes=fact.get("supersedes"),
                extracted_by=ExtractedBy(
                    model=fact["model"],
                    conversation_id=record["conversation_id"],
                    decision=decision,
                    output_sha256=fact["output_sha256"],
                ),
            )
        )
    return writes


class ConversationHandlers:
    """`conversation.submitted` and `conversation.deleted`, for the memory service."""

    def __init__(
        self,
        store: ConversationStore,
        memories: MemoryHandlers,
        limits: ContentLimits,
        *,
        recall: Recall | None = None,
        model: ChatModel | None = None,
        options: ModelOptions | None = None,
        max_attempts: int = 5,
    ) -> None:
        if (model is None) != (options is None) or (model is not None and recall is None):
            raise ValueError("the conversation model needs its endpoint, options and recall")
        self.store = store
        self.memories = memories
        self.limits = limits
        self.recall = recall
        self.model = model
        self.options = options
        self.max_attempts = max_attempts

    @property
    def mode(self) -> str:
        """`model` when a chat model extracts and reconciles facts, else `messages`."""
        return "messages" if self.model is None else "model"

    async def on_submitted(self, event: Envelope[ConversationSubmitted]) -> list[Envelope[Any]]:
        """Store the conversation, then stage its memory writes (after the model's work, when
        a model is configured)."""
        conversation = event.payload
        tenant_id = event.tenant_id
        record = await self.store.open(
            tenant_id,
            {
                "conversation_id": conversation.conversation_id,
                "agent_id": conversation.agent_id,
                "user_id": conversation.user_id,
                "session_id": conversation.session_id,
                "metadata": conversation.metadata,
                "idempotency_key": conversation.idempotency_key,
                "mode": self.mode,
                "status": "processing" if self.model else "processed",
                "messages": message_entries(tenant_id, conversation),
                "facts": None,
                "model_calls": 0,
            },
        )
        ids = {"conversation_id": conversation.conversation_id, "agent_id": conversation.agent_id}
        if record.get("agent_id") != conversation.agent_id or record["status"] in (
            "deleted",
            "failed",
        ):
            log.info("conversation not processed", extra={**ids, "status": record["status"]})
            return []
        if record.get("mode") == "model":
            record = await self._with_model(record)
            if record["status"] == "failed":
                return []
            writes = fact_writes(record)
        else:
            writes = message_writes(record)
        log.info(
            "conversation processed",
            extra={
                **ids,
                "messages": len(record["messages"]),
                "facts": len(record.get("facts") or []),
                "writes": len(writes),
                "model_calls": record.get("model_calls", 0),
            },
        )
        return writes

    async def _with_model(self, record: dict[str, Any]) -> dict[str, Any]:
        """The model's work, saved step by step; a reply that is not the promised JSON fails
        the conversation with its reason, anything else is retried and, on the last attempt,
        recorded as the failure before the input is dead-lettered."""
        tenant_id, conversation_id = record["tenant_id"], record["conversation_id"]
        try:
            return await self._extract_and_decide(record)
        except ModelFailed as failed:
            reason = str(failed)
        except Exception as exc:
            attempts = await self.store.count_attempt(tenant_id, conversation_id)
            if attempts < self.max_attempts:
                raise
            reason = f"processing failed after {attempts} attempts ({type(exc).__name__})"
            await self.store.update(
                tenant_id, conversation_id, {"status": "failed", "error": reason}
            )
            raise PermanentError(reason) from exc
        log.info(
            "conversation failed",
            extra={"conversation_id": conversation_id, "agent_id": record["agent_id"]},
        )
        await self.store.update(tenant_id, conversation_id, {"status": "failed", "error": reason})
        return {**record, "status": "failed", "error": reason}

    async def _extract_and_decide(self, record: dict[str, Any]) -> dict[str, Any]:
        """Facts first (one call), then a decision per fact against the memories most like it
        (one call each; none when the agent holds nothing like it)."""
        assert self.model is not None and self.options is not None
        tenant_id, conversation_id = record["tenant_id"], record["conversation_id"]
        calls = int(record.get("model_calls", 0))
        if record.get("facts") is None:
            reply = await self.model.complete(extraction_request(record["messages"], self.options))
            calls += 1
            self._replied(record, "facts", reply.model, reply.output_sha256)
            proposed = read_facts(reply, self.limits.max_chars)
            facts = fact_entries(tenant_id, record["agent_id"], conversation_id, proposed)
            extraction = {"model": reply.model, "output_sha256": reply.output_sha256}
            record = {**record, "facts": facts, "extraction": extraction, "model_calls": calls}
            await self.store.update(
                tenant_id,
                conversation_id,
                {"facts": facts, "extraction": extraction, "model_calls": calls},
            )
        facts = [dict(f) for f in record["facts"]]
        for fact in facts:
            if fact.get("decision") is not None:
                continue
            fact.update(await self._decide(record, fact))
            calls += 1 if fact["asked"] else 0
            await self.store.update(
                tenant_id, conversation_id, {"facts": facts, "model_calls": calls}
            )
        record = {**record, "facts": facts, "model_calls": calls, "status": "processed"}
        await self.store.update(tenant_id, conversation_id, {"status": "processed"})
        return record

    async def _decide(self, record: dict[str, Any], fact: dict[str, Any]) -> dict[str, Any]:
        """One fact's decision, with what it was based on (the memories shown, the model the
        endpoint reported, a hash of its output)."""
        assert self.model is not None and self.options is not None and self.recall is not None
        found = await self.recall.recall(
            record["tenant_id"],
            record["agent_id"],
            fact["content"],
            self.options.candidates,
            min_score=-1.0,
            filter=MemoryFilter(user_id=record.get("user_id")),
        )
        candidates = [hit for hit in found.results if hit.get("content")]
        extraction = record["extraction"]
        if not candidates:
            return {
                "decision": "add",
                "asked": False,
                "candidates": [],
                "model": extraction["model"],
                "output_sha256": extraction["output_sha256"],
            }
        reply = await self.model.complete(
            decision_request(fact["content"], candidates, self.options)
        )
        self._replied(record, "decision", reply.model, reply.output_sha256)
        decision = read_decision(reply, {c["memory_id"] for c in candidates})
        chosen: dict[str, Any] = {
            "decision": decision.action,
            "asked": True,
            "candidates": [c["memory_id"] for c in candidates],
            "model": reply.model,
            "output_sha256": reply.output_sha256,
        }
        if decision.action == "supersede":
            chosen["supersedes"] = decision.memory_id
        elif decision.action == "skip":
            chosen["known_as"] = decision.memory_id
        return chosen

    @staticmethod
    def _replied(record: dict[str, Any], step: str, model: str, output_sha256: str) -> None:
        log.info(
            "model replied",
            extra={
                "conversation_id": record["conversation_id"],
                "agent_id": record["agent_id"],
                "step": step,
                "model": model,
                "output_sha256": output_sha256,
            },
        )

    async def on_deleted(self, event: Envelope[ConversationDeleted]) -> list[Envelope[Any]]:
        """The conversation's texts go and every memory derived from it is withdrawn through
        the tombstone path; the prune job hears of it."""
        gone = event.payload
        tenant_id = event.tenant_id
        record = await self.store.get(tenant_id, gone.conversation_id) or {}
        await self.store.mark_deleted(
            tenant_id, gone.agent_id, gone.conversation_id, _without_texts(record)
        )
        [published] = await self.memories.sources_gone(
            [Gone(event, gone.conversation_id, gone.prune_job_id, "conversations")]
        )
        log.info(
            "conversation deleted",
            extra={
                "conversation_id": gone.conversation_id,
                "agent_id": gone.agent_id,
                "prune_job_id": gone.prune_job_id,
            },
        )
        return published


def _without_texts(record: dict[str, Any]) -> dict[str, Any]:
    """The parts of a record a deletion keeps: ids, roles, hashes, decisions."""
    kept: dict[str, Any] = {}
    for name in ("messages", "facts"):
        items: Sequence[dict[str, Any]] = record.get(name) or []
        kept[name] = [{k: v for k, v in i.items() if k not in TEXT_FIELDS} for i in items]
    kept["metadata"] = {}
    return kept
