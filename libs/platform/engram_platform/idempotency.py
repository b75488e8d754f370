"""Applied event ids per consumer, so a redelivered event has one effect."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from pymongo import ASCENDING, IndexModel

from engram_platform.indexes import Indexes
from engram_platform.mongo import insert_new

APPLIED = "applied_events"
APPLIED_KEPT_SECONDS = 14 * 24 * 3600
"""How long an applied mark is kept: an event is redelivered only until its offset is committed,
and Kafka keeps a message 7 days by default, so a mark twice that old protects nothing."""
INDEXES: Indexes = {
    APPLIED: [IndexModel([("at", ASCENDING)], expireAfterSeconds=APPLIED_KEPT_SECONDS)],
}


class AppliedEvents:
    """`_id` is `consumer:event_id`, so the primary key is the unique index."""

    def __init__(self, db: Any, consumer: str) -> None:
        self.collection = db[APPLIED]
        self.consumer = consumer

    def _key(self, event_id: object) -> str:
        return f"{self.consumer}:{event_id}"

    async def seen_many(self, event_ids: Iterable[str]) -> set[str]:
        """Which of these events this consumer already applied, in one `_id $in` lookup."""
        keys = {self._key(e): e for e in dict.fromkeys(event_ids)}
        if not keys:
            return set()
        cursor = self.collection.find({"_id": {"$in": list(keys)}}, {"_id": 1})
        return {keys[doc["_id"]] async for doc in cursor}

    async def mark_many(self, applied: Sequence[tuple[str, str]]) -> None:
        """Record many applied events in one write; ids already recorded are skipped."""
        if not applied:
            return
        now = datetime.now(UTC)
        docs = [{"_id": self._key(e), "event_type": t, "at": now} for e, t in applied]
        await insert_new(self.collection, docs)


class UnrecordedEvents:
    """For a consumer whose effects are only events with ids derived from its inputs: nothing is
    recorded, so a replay recomputes and re-sends the same ids, and their consumers skip them."""

    async def seen_many(self, event_ids: Iterable[str]) -> set[str]:
        """Nothing counts as applied before."""
        return set()

    async def mark_many(self, applied: Sequence[tuple[str, str]]) -> None:
        """Nothing to record."""
