"""Events embedded in the document a request writes, moved to the outbox after, recovered
after a crash.

A state change made outside a consumer (an HTTP request) carries its events inside the same
document (`_outbox`, keyed by event id: the local server's `$pull` cannot match embedded
documents, `$unset` of one key works everywhere), one atomic write; they are then staged. A
small marker names the documents being written first, so recovery after a crash reads the
markers and those documents by `_id` instead of scanning whole collections.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from engram_events import Envelope
from engram_platform.outbox.staging import ParcelStaging

PENDING_FIELD = "_outbox"
MARKERS = "outbox_markers"
MARKER_GRACE_SECONDS = 60.0
"""A younger marker may belong to a write still in progress elsewhere; recovery keeps it."""


class Outbox(ParcelStaging):
    """The service's outbox: parcels staged directly, or events embedded in a document first."""

    async def write_with_events(
        self,
        collection: Any,
        doc_id: Any,
        update: dict[str, Any],
        events: Sequence[Envelope[Any]],
        *,
        upsert: bool = True,
        scope: dict[str, Any] | None = None,
    ) -> None:
        """Apply `update` and stage `events` in one atomic single-document write, then relay them."""
        await self.write_many_with_events(
            collection, [(doc_id, update, events)], upsert=upsert, scope=scope
        )

    async def write_many_with_events(
        self,
        collection: Any,
        writes: Sequence[tuple[Any, dict[str, Any], Sequence[Envelope[Any]]]],
        *,
        upsert: bool = True,
        scope: dict[str, Any] | None = None,
    ) -> None:
        """Several such writes under one recovery marker (written first, removed after); `scope`
        (the tenant) joins each write's `_id` in its filter."""
        if not writes:
            return
        marker = {
            "_id": uuid.uuid4().hex,
            "collection": collection.name,
            "doc_ids": [doc_id for doc_id, _, _ in writes],
            "created": time.time(),
        }
        await self.db[MARKERS].insert_one(marker)
        for doc_id, update, events in writes:
            pending = self.entries(events)
            embedded = {f"{PENDING_FIELD}.{entry['_id']}": entry for entry in pending}
            full = {**update, "$set": {**update.get("$set", {}), **embedded}} if pending else update
            await collection.update_one({"_id": doc_id, **(scope or {})}, full, upsert=upsert)
            if pending:
                await self._move_pending(collection, doc_id, pending)
        await self.db[MARKERS].delete_one({"_id": marker["_id"]})

    async def _move_pending(
        self, collection: Any, doc_id: Any, pending: list[dict[str, Any]]
    ) -> None:
        """Copy a document's embedded events to the outbox, then remove them from the document."""
        await self.stage_entries(pending)
        moved = {f"{PENDING_FIELD}.{entry['_id']}": "" for entry in pending}
        await collection.update_one({"_id": doc_id}, {"$unset": moved})

    async def recover(self, collections: Sequence[Any]) -> int:
        """After a crash, move events still embedded in the marked documents to the outbox.

        Markers older than the grace are removed once handled; a younger one may belong to a
        write in progress in another instance, which removes it itself.
        """
        by_name = {c.name: c for c in collections}
        moved = 0
        now = time.time()
        async for marker in self.db[MARKERS].find({}):
            collection = by_name.get(marker.get("collection"))
            if collection is None:
                continue
            for doc_id in marker.get("doc_ids", []):
                doc = await collection.find_one({"_id": doc_id}, {PENDING_FIELD: 1})
                embedded = (doc or {}).get(PENDING_FIELD)
                pending = sorted(embedded.values(), key=lambda e: e["order"]) if embedded else []
                if pending:
                    await self._move_pending(collection, doc_id, pending)
                    moved += len(pending)
            if now - float(marker.get("created", 0)) > MARKER_GRACE_SECONDS:
                await self.db[MARKERS].delete_one({"_id": marker["_id"]})
        return moved
