"""Parked inputs in the service's database: one row per event id, a key's rows by offset."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pymongo import ASCENDING, IndexModel, ReturnDocument

from engram_platform.consuming.parking import ParkedInput, Place, StoredRecord
from engram_platform.indexes import Indexes
from engram_platform.mongo import insert_new

PARKED = "parked_inputs"
INDEXES: Indexes = {PARKED: [IndexModel([("key", ASCENDING), ("offset", ASCENDING)])]}
_PLACE = {"_id": 1, "key": 1, "offset": 1, "due": 1, "leased_until": 1}


def _aware(when: datetime | None) -> datetime | None:
    """A stored time read by a client that is not tz-aware comes back naive, in UTC."""
    if when is None or when.tzinfo is not None:
        return when
    return when.replace(tzinfo=UTC)


def to_doc(row: ParkedInput) -> dict[str, Any]:
    """The row as stored: the record's fields flat, its bytes as binary, each header a
    document (the local server stores no arrays within arrays)."""
    record = row.record
    return {
        "_id": row.event_id,
        "event_type": row.event_type,
        "tenant_id": row.tenant_id,
        "key": row.key,
        "topic": record.topic,
        "partition": record.partition,
        "offset": record.offset,
        "kafka_key": record.key,
        "value": record.value,
        "headers": [{"name": name, "value": value} for name, value in record.headers],
        "status": row.status,
        "attempts": row.attempts,
        "reason": row.reason,
        "due": row.due,
        "parked_at": row.parked_at,
        "leased_until": row.leased_until,
    }


def from_doc(doc: dict[str, Any]) -> ParkedInput:
    """The stored row as the consumer reads it."""
    kafka_key = doc.get("kafka_key")
    return ParkedInput(
        event_id=str(doc["_id"]),
        event_type=str(doc["event_type"]),
        tenant_id=doc.get("tenant_id"),
        key=str(doc["key"]),
        record=StoredRecord(
            topic=str(doc["topic"]),
            partition=int(doc["partition"]),
            offset=int(doc["offset"]),
            key=None if kafka_key is None else bytes(kafka_key),
            value=bytes(doc["value"]),
            headers=tuple(
                (str(header["name"]), bytes(header["value"])) for header in doc.get("headers") or ()
            ),
        ),
        status=doc["status"],
        attempts=int(doc["attempts"]),
        reason=doc.get("reason"),
        due=_aware(doc["due"]) or datetime.now(UTC),
        parked_at=_aware(doc["parked_at"]) or datetime.now(UTC),
        leased_until=_aware(doc.get("leased_until")),
    )


class MongoParkedInputs:
    """`ParkedInputs` over a collection; a claim is one `find_one_and_update`, so two replicas
    of a service never run the same row at once."""

    def __init__(self, db: Any) -> None:
        self.collection = db[PARKED]

    async def park_many(self, rows: Sequence[ParkedInput]) -> None:
        """Insert rows whose event id is new; a replayed batch's rows are already there."""
        await insert_new(self.collection, [to_doc(row) for row in rows])

    async def places(self) -> list[Place]:
        """Every row's place in line, without its bytes."""
        return [
            Place(
                event_id=str(doc["_id"]),
                key=str(doc["key"]),
                offset=int(doc["offset"]),
                due=_aware(doc["due"]) or datetime.now(UTC),
                leased_until=_aware(doc.get("leased_until")),
            )
            async for doc in self.collection.find({}, _PLACE)
        ]

    async def claim(self, event_id: str, now: datetime, until: datetime) -> ParkedInput | None:
        """The row with its lease, unless it is gone or leased by another run."""
        doc = await self.collection.find_one_and_update(
            {"_id": event_id, "$or": [{"leased_until": None}, {"leased_until": {"$lte": now}}]},
            {"$set": {"leased_until": until}},
            return_document=ReturnDocument.AFTER,
        )
        return None if doc is None else from_doc(doc)

    async def reschedule(
        self, event_id: str, *, attempts: int, reason: str | None, due: datetime
    ) -> None:
        """Parked again, due later, its lease released."""
        await self.collection.update_one(
            {"_id": event_id},
            {
                "$set": {
                    "status": "parked",
                    "attempts": attempts,
                    "reason": reason,
                    "due": due,
                    "leased_until": None,
                }
            },
        )

    async def release(self, event_id: str) -> None:
        """The lease given up."""
        await self.collection.update_one({"_id": event_id}, {"$set": {"leased_until": None}})

    async def delete(self, event_id: str) -> None:
        """The row removed."""
        await self.collection.delete_one({"_id": event_id})

    async def holds(self, key: str) -> bool:
        """Whether a row of the key is left."""
        return await self.collection.find_one({"key": key}, {"_id": 1}) is not None
