"""Applied event ids per consumer, so a redelivered event has one effect."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pymongo.errors import DuplicateKeyError

APPLIED = "applied_events"


class AppliedEvents:
    """`_id` is `consumer:event_id`, so the primary key is the unique index."""

    def __init__(self, db: Any, consumer: str) -> None:
        self.collection = db[APPLIED]
        self.consumer = consumer

    def _key(self, event_id: object) -> str:
        return f"{self.consumer}:{event_id}"

    async def seen(self, event_id: object) -> bool:
        """True when this consumer already applied the event."""
        return await self.collection.find_one({"_id": self._key(event_id)}, {"_id": 1}) is not None

    async def mark(self, event_id: object, event_type: str) -> bool:
        """Record the event as applied; False when it already was."""
        try:
            await self.collection.insert_one(
                {"_id": self._key(event_id), "event_type": event_type, "at": datetime.now(UTC)}
            )
        except DuplicateKeyError:
            return False
        return True
