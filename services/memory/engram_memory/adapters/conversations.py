"""Conversation records in Mongo, keyed `tenant:conversation_id`: the messages, the facts a model
proposed and every decision. Each query names the tenant and reads or writes by `_id`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pymongo import ReturnDocument

from engram_platform.held import held_ids
from engram_platform.mongo import insert_new

CONVERSATIONS = "conversations"


def conversation_key(tenant_id: str, conversation_id: str) -> str:
    """Records are keyed by tenant first, like every other row."""
    return f"{tenant_id}:{conversation_id}"


class ConversationStore:
    """The memory service's conversation records."""

    def __init__(self, db: Any) -> None:
        self.collection = db[CONVERSATIONS]

    def _key(self, tenant_id: str, conversation_id: str) -> dict[str, Any]:
        return {"_id": conversation_key(tenant_id, conversation_id), "tenant_id": tenant_id}

    async def get(self, tenant_id: str, conversation_id: str) -> dict[str, Any] | None:
        """One conversation of the tenant."""
        found: dict[str, Any] | None = await self.collection.find_one(
            self._key(tenant_id, conversation_id)
        )
        return found

    async def owners(self, tenant_id: str, conversation_ids: Sequence[str]) -> dict[str, str]:
        """The agent of each of these conversations the tenant has, by conversation id."""
        rows = await held_ids(self.collection, tenant_id, conversation_ids, ["agent_id"])
        return {
            conversation_id: str(row.get("agent_id", "")) for conversation_id, row in rows.items()
        }

    async def open(self, tenant_id: str, record: Mapping[str, Any]) -> dict[str, Any]:
        """Store a new conversation; a replayed or repeated submission (or one whose deletion
        came first) leaves the stored record as it is, which is returned, unless a dead letter
        left it failed: its replayed letter stores it again."""
        now = datetime.now(UTC)
        doc = {
            **record,
            **self._key(tenant_id, record["conversation_id"]),
            "created_at": now,
            "updated_at": now,
        }
        present = await insert_new(self.collection, [doc])
        if not present:
            return doc
        stored = await self.get(tenant_id, record["conversation_id"])
        assert stored is not None, "insert_new found it"
        if stored.get("dead_lettered_at") is not None and stored.get("status") == "failed":
            left = {**self._key(tenant_id, record["conversation_id"]), "status": "failed"}
            replaced = await self.collection.replace_one(
                {**left, "dead_lettered_at": {"$exists": True}}, doc
            )
            if replaced.matched_count:
                return doc
        return stored

    async def update(self, tenant_id: str, conversation_id: str, fields: Mapping[str, Any]) -> None:
        """Set fields of a conversation that has not been deleted."""
        await self.collection.update_one(
            {**self._key(tenant_id, conversation_id), "status": {"$ne": "deleted"}},
            {"$set": {**fields, "updated_at": datetime.now(UTC)}},
        )

    async def mark_failed(
        self, tenant_id: str, record: Mapping[str, Any], reason: str
    ) -> dict[str, Any]:
        """A conversation whose submission was dead-lettered ends `failed` with the reason:
        created from these fields when it was never stored, else moved there unless it is
        already failed or deleted. Returns the record as it now stands."""
        key = self._key(tenant_id, record["conversation_id"])
        now = datetime.now(UTC)
        marks = {"status": "failed", "error": reason, "updated_at": now}
        doc = {**record, **key, **marks, "created_at": now}
        if not await insert_new(self.collection, [doc]):
            return doc
        moved = {**marks, "dead_lettered_at": record.get("dead_lettered_at", now)}
        await self.collection.update_one(
            {**key, "status": {"$nin": ["failed", "deleted"]}}, {"$set": moved}
        )
        return await self.get(tenant_id, record["conversation_id"]) or doc

    async def count_attempt(self, tenant_id: str, conversation_id: str) -> int:
        """One more failed processing attempt; how many there have been."""
        found = await self.collection.find_one_and_update(
            self._key(tenant_id, conversation_id),
            {"$inc": {"attempts": 1}, "$set": {"updated_at": datetime.now(UTC)}},
            return_document=ReturnDocument.AFTER,
        )
        return int((found or {}).get("attempts", 1))

    async def mark_deleted(
        self, tenant_id: str, agent_id: str, conversation_id: str, record: Mapping[str, Any]
    ) -> None:
        """The conversation is deleted: its texts go, ids, hashes and decisions stay (a
        tombstone is written even if the conversation never arrived, so it cannot later)."""
        now = datetime.now(UTC)
        await self.collection.update_one(
            self._key(tenant_id, conversation_id),
            {
                "$set": {
                    **record,
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
