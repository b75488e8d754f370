"""Conversation records in Mongo, keyed `tenant:conversation_id`: the messages, the facts a model
proposed and every decision. Each query names the tenant and reads or writes by `_id`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pymongo import ReturnDocument

from engram_memory.domain.conversation_records import (
    ConversationRecord,
    Extraction,
    FactDecision,
    FactEntry,
    MessageEntry,
)
from engram_platform.held import held_ids
from engram_platform.mongo import insert_new

CONVERSATIONS = "conversations"
MESSAGE_FIELDS = tuple(f.name for f in dataclasses.fields(MessageEntry))
DECISION_FIELDS = tuple(f.name for f in dataclasses.fields(FactDecision) if f.name != "action")
RECORD_FIELDS = tuple(
    f.name
    for f in dataclasses.fields(ConversationRecord)
    if f.name not in ("messages", "facts", "extraction")
)


def conversation_key(tenant_id: str, conversation_id: str) -> str:
    """Records are keyed by tenant first, like every other row."""
    return f"{tenant_id}:{conversation_id}"


def _present(doc: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The named fields a stored document holds (a field stored as null reads as unset)."""
    return {name: doc[name] for name in names if doc.get(name) is not None}


def _fact(doc: Mapping[str, Any]) -> FactEntry:
    """A stored fact: its decision's fields sit beside it (`decision` holds the action)."""
    decision = None
    if doc.get("decision") is not None:
        decided = _present(doc, DECISION_FIELDS)
        decided["candidates"] = tuple(doc.get("candidates") or ())
        decision = FactDecision(action=doc["decision"], **decided)
    return FactEntry(
        index=doc["index"],
        content_sha256=doc["content_sha256"],
        memory_id=doc["memory_id"],
        content=doc.get("content"),
        decision=decision,
    )


def conversation_record(doc: Mapping[str, Any]) -> ConversationRecord:
    """A stored conversation as the service reads it; the key and any field the record type
    does not name stay here."""
    facts, extraction = doc.get("facts"), doc.get("extraction")
    return ConversationRecord(
        **_present(doc, RECORD_FIELDS),
        messages=tuple(
            MessageEntry(**_present(m, MESSAGE_FIELDS)) for m in doc.get("messages") or ()
        ),
        facts=None if facts is None else tuple(_fact(f) for f in facts),
        extraction=None if not extraction else Extraction(**extraction),
    )


def _fact_doc(fact: FactEntry) -> dict[str, Any]:
    """A fact as stored: flat, its decision's fields beside it once decided."""
    doc: dict[str, Any] = {
        "index": fact.index,
        "content": fact.content,
        "content_sha256": fact.content_sha256,
        "memory_id": fact.memory_id,
        "decision": None,
    }
    if fact.decision is not None:
        decided = dataclasses.asdict(fact.decision)
        doc.update({name: decided[name] for name in DECISION_FIELDS if decided[name] is not None})
        doc["decision"] = fact.decision.action
        doc["candidates"] = list(fact.decision.candidates)
    return doc


def _without_text(doc: dict[str, Any]) -> dict[str, Any]:
    """A message or fact as a deleted conversation keeps it: no `content` at all."""
    return {name: value for name, value in doc.items() if name != "content"}


def conversation_doc(record: ConversationRecord) -> dict[str, Any]:
    """What a record stores of its own (the key and the times are the store's)."""
    fields = {
        name: getattr(record, name)
        for name in RECORD_FIELDS
        if getattr(record, name) is not None and name not in ("created_at", "updated_at")
    }
    fields["messages"] = [dataclasses.asdict(m) for m in record.messages]
    fields["facts"] = None if record.facts is None else [_fact_doc(f) for f in record.facts]
    if record.extraction is not None:
        fields["extraction"] = dataclasses.asdict(record.extraction)
    return fields


class ConversationStore:
    """The memory service's conversation records."""

    def __init__(self, db: Any) -> None:
        self.collection = db[CONVERSATIONS]

    def _key(self, tenant_id: str, conversation_id: str) -> dict[str, Any]:
        return {"_id": conversation_key(tenant_id, conversation_id), "tenant_id": tenant_id}

    async def get(self, tenant_id: str, conversation_id: str) -> ConversationRecord | None:
        """One conversation of the tenant."""
        found = await self.collection.find_one(self._key(tenant_id, conversation_id))
        return None if found is None else conversation_record(found)

    async def owners(self, tenant_id: str, conversation_ids: Sequence[str]) -> dict[str, str]:
        """The agent of each of these conversations the tenant has, by conversation id."""
        rows = await held_ids(self.collection, tenant_id, conversation_ids, ["agent_id"])
        return {
            conversation_id: str(row.get("agent_id", "")) for conversation_id, row in rows.items()
        }

    async def open(self, record: ConversationRecord) -> ConversationRecord:
        """Store a new conversation; a replayed or repeated submission (or one whose deletion
        came first) leaves the stored record as it is, which is returned, unless a dead letter
        left it failed: its replayed letter stores it again."""
        now = datetime.now(UTC)
        key = self._key(record.tenant_id, record.conversation_id)
        doc = {**conversation_doc(record), **key, "created_at": now, "updated_at": now}
        present = await insert_new(self.collection, [doc])
        if not present:
            return conversation_record(doc)
        stored = await self.get(record.tenant_id, record.conversation_id)
        assert stored is not None, "insert_new found it"
        if stored.dead_lettered_at is not None and stored.status == "failed":
            replaced = await self.collection.replace_one(
                {**key, "status": "failed", "dead_lettered_at": {"$exists": True}}, doc
            )
            if replaced.matched_count:
                return conversation_record(doc)
        return stored

    async def _update(self, tenant_id: str, conversation_id: str, fields: dict[str, Any]) -> None:
        """Set fields of a conversation that has not been deleted."""
        await self.collection.update_one(
            {**self._key(tenant_id, conversation_id), "status": {"$ne": "deleted"}},
            {"$set": {**fields, "updated_at": datetime.now(UTC)}},
        )

    async def save_facts(
        self,
        tenant_id: str,
        conversation_id: str,
        facts: Sequence[FactEntry],
        model_calls: int,
        *,
        extraction: Extraction | None = None,
    ) -> None:
        """The facts as decided so far and the model calls made (with the call that proposed
        them, the first time)."""
        fields: dict[str, Any] = {
            "facts": [_fact_doc(f) for f in facts],
            "model_calls": model_calls,
        }
        if extraction is not None:
            fields["extraction"] = dataclasses.asdict(extraction)
        await self._update(tenant_id, conversation_id, fields)

    async def settle(
        self, tenant_id: str, conversation_id: str, status: str, error: str | None = None
    ) -> None:
        """The conversation's processing ended: `processed`, or `failed` with the reason."""
        fields: dict[str, Any] = {"status": status}
        if error is not None:
            fields["error"] = error
        await self._update(tenant_id, conversation_id, fields)

    async def mark_failed(self, record: ConversationRecord, reason: str) -> ConversationRecord:
        """A conversation whose submission was dead-lettered ends `failed` with the reason:
        created from this record when it was never stored, else moved there unless it is
        already failed or deleted. Returns the record as it now stands."""
        key = self._key(record.tenant_id, record.conversation_id)
        now = datetime.now(UTC)
        marks = {"status": "failed", "error": reason, "updated_at": now}
        doc = {**conversation_doc(record), **key, **marks, "created_at": now}
        if not await insert_new(self.collection, [doc]):
            return conversation_record(doc)
        moved = {**marks, "dead_lettered_at": record.dead_lettered_at or now}
        await self.collection.update_one(
            {**key, "status": {"$nin": ["failed", "deleted"]}}, {"$set": moved}
        )
        stored = await self.get(record.tenant_id, record.conversation_id)
        return stored or conversation_record(doc)

    async def count_attempt(self, tenant_id: str, conversation_id: str) -> int:
        """One more failed processing attempt; how many there have been."""
        found = await self.collection.find_one_and_update(
            self._key(tenant_id, conversation_id),
            {"$inc": {"attempts": 1}, "$set": {"updated_at": datetime.now(UTC)}},
            return_document=ReturnDocument.AFTER,
        )
        return int((found or {}).get("attempts", 1))

    async def mark_deleted(
        self,
        tenant_id: str,
        agent_id: str,
        conversation_id: str,
        kept: ConversationRecord | None,
    ) -> None:
        """The conversation is deleted: its texts go, ids, hashes and decisions stay (`kept`,
        the record without its texts; a tombstone is written even if the conversation never
        arrived, so it cannot later)."""
        now = datetime.now(UTC)
        held = {
            "messages": []
            if kept is None
            else [_without_text(dataclasses.asdict(m)) for m in kept.messages],
            "facts": []
            if kept is None
            else [_without_text(_fact_doc(f)) for f in kept.facts or ()],
            "metadata": {},
        }
        await self.collection.update_one(
            self._key(tenant_id, conversation_id),
            {
                "$set": {
                    **held,
                    "tenant_id": tenant_id,
                    "agent_id": agent_id,
                    "conversation_id": conversation_id,
                    "status": "deleted",
                    "deleted_at": now,
                    "updated_at": now,
                },
                "$setOnInsert": {"created_at": now},
            },
            upsert=True,
        )
