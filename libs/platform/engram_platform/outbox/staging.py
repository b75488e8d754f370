"""Staging: pending events packed into parcels, read back by the relay in staging order."""

from __future__ import annotations

import asyncio
import hashlib
import zlib
from collections import OrderedDict, deque
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import bson
from pymongo import ASCENDING, IndexModel

from engram_events import Envelope, topic_name
from engram_platform.give_way import give_way
from engram_platform.indexes import Indexes
from engram_platform.mongo import insert_new
from engram_platform.outbox.entries import next_order, outbox_entry, tombstone_entry, trace_headers

OUTBOX = "outbox"
PARCEL_SIZE = 500
PARCEL_CACHE = 64
INDEXES: Indexes = {OUTBOX: [IndexModel([("order", ASCENDING), ("_id", ASCENDING)])]}
"""The relay's rescan reads parcels in staging order."""


class ParcelStaging:
    """The service's pending events, packed into parcels of entries in staging order.

    A parcel's id is derived from the event ids it holds, so re-staging the same batch after a
    crash is a no-op. Parcels are read and deleted by `_id` only: on the local MongoDB-protocol
    server any other query scans the whole collection (see docs/DEVELOPING.md). A parcel's
    entries are stored as one BSON blob, which that server stores and parses as one value
    instead of hundreds of nested documents, and the parcels this process staged are kept in
    memory so its relay publishes them without reading them back.
    """

    def __init__(self, db: Any, *, topic_prefix: str = "", parcel_size: int = PARCEL_SIZE) -> None:
        self.db = db
        self.collection = db[OUTBOX]
        self.prefix = topic_prefix
        self.parcel_size = parcel_size
        self.wakeup = asyncio.Event()
        self.queue: deque[str] = deque()
        self.staged: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    def entries(self, envelopes: Iterable[Envelope[Any]]) -> list[dict[str, Any]]:
        """Outbox entries for events, capturing the current trace context and their order."""
        now = datetime.now(UTC)
        headers = trace_headers()
        return [outbox_entry(e, self.prefix, now, next_order(), dict(headers)) for e in envelopes]

    def tombstone_entry(self, base_topic: str, key: str, entry_id: str) -> dict[str, Any]:
        """An outbox entry for a Kafka tombstone (null value) on a compacted topic."""
        return tombstone_entry(topic_name(base_topic, self.prefix), key, entry_id)

    async def stage(self, envelopes: Iterable[Envelope[Any]]) -> int:
        """Durably record events to publish; re-staging the same events is a no-op."""
        return await self.stage_entries(self.entries(envelopes))

    async def stage_entries(self, docs: list[dict[str, Any]]) -> int:
        """Pack prepared entries (see `entries`) into parcels and insert them in one write."""
        docs = list({str(d["_id"]): d for d in docs}.values())
        if not docs:
            return 0
        chunks = [docs[i : i + self.parcel_size] for i in range(0, len(docs), self.parcel_size)]
        parcels = []
        for chunk in chunks:
            await give_way()
            parcels.append(_parcel(chunk))
        await insert_new(self.collection, parcels)
        queued = set(self.queue)
        for parcel, chunk in zip(parcels, chunks, strict=True):
            self._remember(parcel["_id"], chunk)
        self.queue.extend(p["_id"] for p in parcels if p["_id"] not in queued)
        self.wakeup.set()
        return len(docs)

    async def rescan(self) -> None:
        """Queue parcels staged elsewhere (another instance, or before a restart), in order."""
        queued = set(self.queue)
        cursor = self.collection.find({}, {"_id": 1, "order": 1}).sort(
            [("order", ASCENDING), ("_id", ASCENDING)]
        )
        found = [doc["_id"] async for doc in cursor]
        self.queue.extend(pid for pid in found if pid not in queued)

    def _remember(self, parcel_id: str, entries: list[dict[str, Any]]) -> None:
        """Keep a staged parcel's entries for the relay; bounded, the oldest are read back."""
        self.staged[parcel_id] = entries
        while len(self.staged) > PARCEL_CACHE:
            self.staged.popitem(last=False)

    async def next_parcels(self, limit: int = 20) -> list[dict[str, Any]]:
        """The next parcels to publish, from memory or read by `_id`; sent ones are skipped."""
        parcels: list[dict[str, Any]] = []
        taken: set[str] = set()
        while self.queue and len(parcels) < limit:
            parcel_id = self.queue.popleft()
            if parcel_id in taken:
                continue
            taken.add(parcel_id)
            entries = self.staged.pop(parcel_id, None)
            if entries is None:
                stored = await self.collection.find_one({"_id": parcel_id})
                entries = parcel_entries(stored) if stored is not None else None
            if entries is not None:
                parcels.append({"_id": parcel_id, "entries": entries})
        return parcels

    async def mark_sent(self, parcel_ids: list[str]) -> None:
        """Sent parcels leave the outbox in one delete; consumers dedup any resend by event_id."""
        if parcel_ids:
            await self.collection.delete_many({"_id": {"$in": parcel_ids}})


def _parcel(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """One outbox document holding entries in order as one compressed blob (the database's cost
    grows with the bytes it stores); its id is derived from the entries'."""
    digest = hashlib.sha256("\x1f".join(str(e["_id"]) for e in entries).encode()).hexdigest()
    return {
        "_id": f"parcel-{digest[:32]}",
        "order": entries[0]["order"],
        "count": len(entries),
        "codec": "zlib",
        "packed": bson.Binary(zlib.compress(bson.encode({"entries": entries}), 1)),
    }


def parcel_entries(parcel: dict[str, Any]) -> list[dict[str, Any]]:
    """A stored parcel's entries."""
    entries: list[dict[str, Any]] = bson.decode(zlib.decompress(bytes(parcel["packed"])))["entries"]
    return entries
