"""Conversations: stored as records, turned into memory write requests through the normal write
path (dedup, content floors, supersedes), and withdrawn through the tombstone path.

The record is written first and every step of the model's work is saved in it before the next
(the proposed facts, then each decision), so a retry or a replay never asks the model again
for what it already answered, and the write requests, derived from the record alone, carry
the same memory and event ids however often they are staged. Logs carry ids, counts and
hashes, never text.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from engram_events import Envelope
from engram_events.content import ContentLimits
from engram_events.memory_filter import MemoryFilter
from engram_events.payloads.conversations import ConversationDeleted, ConversationSubmitted
from engram_events.payloads.dlq import DeadLetter
from engram_memory.domain.conversation_records import (
    ConversationRecord,
    Extraction,
    FactDecision,
    FactEntry,
)
from engram_memory.domain.conversation_writes import fact_writes, message_writes
from engram_memory.domain.conversations import (
    ModelOptions,
    decision_request,
    extraction_request,
    fact_entries,
    message_entries,
    read_decision,
    read_facts,
)
from engram_memory.domain.sources import Gone
from engram_memory.ports import ConversationRecords
from engram_memory.service.cascades import Cascades
from engram_memory.service.recall import Recall
from engram_platform.chat import ChatModel, ModelFailed
from engram_platform.retry import PermanentError

log = logging.getLogger(__name__)


class ConversationIntake:
    """Conversations submitted (stored, then turned into memory writes) and deleted."""

    def __init__(
        self,
        store: ConversationRecords,
        cascades: Cascades,
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
        self.cascades = cascades
        self.limits = limits
        self.recall = recall
        self.model = model
        self.options = options
        self.max_attempts = max_attempts

    @property
    def mode(self) -> str:
        """`model` when a chat model extracts and reconciles facts, else `messages`."""
        return "messages" if self.model is None else "model"

    async def submitted(self, event: Envelope[ConversationSubmitted]) -> list[Envelope[Any]]:
        """Store the conversation, then stage its memory writes (after the model's work, when
        a model is configured)."""
        conversation = event.payload
        tenant_id = event.tenant_id
        record = await self.store.open(
            ConversationRecord(
                tenant_id=tenant_id,
                conversation_id=conversation.conversation_id,
                agent_id=conversation.agent_id,
                status="processing" if self.model else "processed",
                mode=self.mode,
                messages=tuple(message_entries(tenant_id, conversation)),
                user_id=conversation.user_id,
                session_id=conversation.session_id,
                idempotency_key=conversation.idempotency_key,
                metadata=conversation.metadata,
            )
        )
        ids = {"conversation_id": conversation.conversation_id, "agent_id": conversation.agent_id}
        if record.agent_id != conversation.agent_id or record.status in ("deleted", "failed"):
            log.info("conversation not processed", extra={**ids, "status": record.status})
            return []
        if record.mode == "model":
            record = await self._with_model(record)
            if record.status == "failed":
                return []
            writes = fact_writes(record)
        else:
            writes = message_writes(record)
        log.info(
            "conversation processed",
            extra={
                **ids,
                "messages": len(record.messages),
                "facts": len(record.facts or ()),
                "writes": len(writes),
                "model_calls": record.model_calls,
            },
        )
        return writes

    async def dead_lettered(
        self, event: Envelope[ConversationSubmitted], letter: DeadLetter
    ) -> list[Envelope[Any]]:
        """A submission the consumer gave up on leaves its conversation `failed` with the
        reason (settled); a record it never stored keeps ids only, not the messages or the
        metadata that may be what the database refused."""
        conversation = event.payload
        record = await self.store.mark_failed(
            ConversationRecord(
                tenant_id=event.tenant_id,
                conversation_id=conversation.conversation_id,
                agent_id=conversation.agent_id,
                status="failed",
                mode=self.mode,
                user_id=conversation.user_id,
                session_id=conversation.session_id,
                idempotency_key=conversation.idempotency_key,
                dead_lettered_at=letter.failed_at,
            ),
            letter.item_reason(),
        )
        log.info(
            "conversation dead-lettered",
            extra={
                "conversation_id": conversation.conversation_id,
                "agent_id": conversation.agent_id,
                "status": record.status,
                "error_type": letter.error_type,
            },
        )
        return []

    async def _with_model(self, record: ConversationRecord) -> ConversationRecord:
        """The model's work, saved step by step; a reply that is not the promised JSON fails
        the conversation with its reason, anything else is retried and, on the last attempt,
        recorded as the failure before the input is dead-lettered."""
        tenant_id, conversation_id = record.tenant_id, record.conversation_id
        try:
            return await self._extract_and_decide(record)
        except ModelFailed as failed:
            reason = str(failed)
        except Exception as exc:
            attempts = await self.store.count_attempt(tenant_id, conversation_id)
            if attempts < self.max_attempts:
                raise
            reason = f"processing failed after {attempts} attempts ({type(exc).__name__})"
            await self.store.settle(tenant_id, conversation_id, "failed", reason)
            raise PermanentError(reason) from exc
        log.info(
            "conversation failed",
            extra={"conversation_id": conversation_id, "agent_id": record.agent_id},
        )
        await self.store.settle(tenant_id, conversation_id, "failed", reason)
        return dataclasses.replace(record, status="failed", error=reason)

    async def _extract_and_decide(self, record: ConversationRecord) -> ConversationRecord:
        """Facts first (one call), then a decision per fact against the memories most like it
        (one call each; none when the agent holds nothing like it)."""
        assert self.model is not None and self.options is not None
        tenant_id, conversation_id = record.tenant_id, record.conversation_id
        calls = record.model_calls
        if record.facts is None:
            reply = await self.model.complete(extraction_request(record.messages, self.options))
            calls += 1
            self._replied(record, "facts", reply.model, reply.output_sha256)
            proposed = read_facts(reply, self.limits.max_chars)
            extraction = Extraction(reply.model, reply.output_sha256)
            record = dataclasses.replace(
                record,
                facts=tuple(fact_entries(tenant_id, record.agent_id, conversation_id, proposed)),
                extraction=extraction,
                model_calls=calls,
            )
            await self.store.save_facts(
                tenant_id, conversation_id, record.facts or (), calls, extraction=extraction
            )
        facts = list(record.facts or ())
        for n, fact in enumerate(facts):
            if fact.decision is not None:
                continue
            decided = await self._decide(record, fact)
            facts[n] = dataclasses.replace(fact, decision=decided)
            calls += 1 if decided.asked else 0
            await self.store.save_facts(tenant_id, conversation_id, facts, calls)
        await self.store.settle(tenant_id, conversation_id, "processed")
        return dataclasses.replace(
            record, facts=tuple(facts), model_calls=calls, status="processed"
        )

    async def _decide(self, record: ConversationRecord, fact: FactEntry) -> FactDecision:
        """One fact's decision, with what it was based on (the memories shown, the model the
        endpoint reported, a hash of its output)."""
        assert self.model is not None and self.options is not None and self.recall is not None
        assert record.extraction is not None, "facts are saved with the call that proposed them"
        found = await self.recall.recall(
            record.tenant_id,
            record.agent_id,
            fact.content or "",
            self.options.candidates,
            min_score=-1.0,
            filter=MemoryFilter(user_id=record.user_id),
        )
        candidates = [hit for hit in found.results if hit.get("content")]
        if not candidates:
            extraction = record.extraction
            return FactDecision("add", False, (), extraction.model, extraction.output_sha256)
        reply = await self.model.complete(
            decision_request(fact.content or "", candidates, self.options)
        )
        self._replied(record, "decision", reply.model, reply.output_sha256)
        decision = read_decision(reply, {c["memory_id"] for c in candidates})
        return FactDecision(
            decision.action,
            True,
            tuple(c["memory_id"] for c in candidates),
            reply.model,
            reply.output_sha256,
            supersedes=decision.memory_id if decision.action == "supersede" else None,
            known_as=decision.memory_id if decision.action == "skip" else None,
        )

    @staticmethod
    def _replied(record: ConversationRecord, step: str, model: str, output_sha256: str) -> None:
        log.info(
            "model replied",
            extra={
                "conversation_id": record.conversation_id,
                "agent_id": record.agent_id,
                "step": step,
                "model": model,
                "output_sha256": output_sha256,
            },
        )

    async def deleted(self, event: Envelope[ConversationDeleted]) -> list[Envelope[Any]]:
        """The conversation's texts go and every memory derived from it is withdrawn through
        the tombstone path; the prune job hears of it."""
        gone = event.payload
        tenant_id = event.tenant_id
        record = await self.store.get(tenant_id, gone.conversation_id)
        await self.store.mark_deleted(
            tenant_id,
            gone.agent_id,
            gone.conversation_id,
            None if record is None else record.without_texts(),
        )
        [published] = await self.cascades.sources_gone(
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
