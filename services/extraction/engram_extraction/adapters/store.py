"""Extraction's database: record heads, revision history (hashes only), manifests, rejects.

Inserts are batched with `insert_many`, heads are read by `_id`, an update touches only small
collections (manifests, imports, attempts), and a revised head is replaced by one `delete_many`
per batch plus `insert_many`, never one update per row. Listings are keyset pages over the
declared (tenant, filter, updated_at, _id) indexes.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import bson
from pymongo import ASCENDING, IndexModel, ReturnDocument

from engram_events.ids import Scalar
from engram_extraction.domain.records import Rejection, Source
from engram_extraction.domain.revisions import TOMBSTONED_CAUSE, Change, Entry
from engram_platform.indexes import Indexes
from engram_platform.mongo import insert_new

RECORDS = "records"
REVISIONS = "record_revisions"
MANIFESTS = "manifests"
REJECTED = "rejected_candidates"
ATTEMPTS = "attempts"
IMPORTS = "imports"
HISTORY_LIMIT = 100


def _listing(field: str) -> IndexModel:
    """A filtered listing's order: the tenant, the filter, then (updated_at, _id)."""
    keys = [("tenant_id", ASCENDING), (field, ASCENDING)]
    return IndexModel([*keys, ("updated_at", ASCENDING), ("_id", ASCENDING)])


INDEXES: Indexes = {
    RECORDS: [
        _listing("record_type"),
        _listing("document_id"),
        _listing("entity_id"),
        IndexModel([("tenant_id", ASCENDING), ("updated_at", ASCENDING), ("_id", ASCENDING)]),
        IndexModel([("tenant_id", ASCENDING), ("prune_job_id", ASCENDING)]),
    ],
}
"""Listings filtered by type, document or entity, the unfiltered listing and a prune by age (its
other conditions checked on those heads), and the heads a prune job already tombstoned.
Everything else is read by `_id`."""


def pairs(attributes: dict[str, Scalar]) -> list[dict[str, Scalar]]:
    """Attributes as a list of {k, v}: names may hold dots or `$`, which field names cannot."""
    return [{"k": k, "v": v} for k, v in attributes.items()]


def unpairs(stored: list[dict[str, Any]]) -> dict[str, Scalar]:
    """The inverse of `pairs`, keeping the source's attribute order."""
    return {item["k"]: item["v"] for item in stored}


def _manifest_entries(doc: dict[str, Any]) -> dict[str, str]:
    """A stored manifest's entries: one compressed blob (a 20k-row document's manifest as a
    20k-key object cost the database most of a second per write), or the older plain form."""
    if "packed" in doc:
        entries: dict[str, str] = bson.decode(zlib.decompress(bytes(doc["packed"])))
        return entries
    plain: dict[str, str] = doc.get("entries", {})
    return plain


def _chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class RecordStore:
    """Every key starts with the tenant, and every query carries the tenant predicate."""

    def __init__(self, db: Any, *, batch: int = 2000) -> None:
        self.db = db
        self.batch = batch

    async def _insert_ignoring_duplicates(
        self, collection: str, docs: list[dict[str, Any]]
    ) -> None:
        """Insert in batches; ids already present are a replay and are left as they are."""
        for chunk in _chunks(docs, self.batch):
            await insert_new(self.db[collection], chunk)

    async def manifest(self, tenant_id: str, source_item: str) -> dict[str, Entry]:
        """What this source asserted so far, by record id."""
        doc = await self.db[MANIFESTS].find_one(
            {"_id": f"{tenant_id}:{source_item}", "tenant_id": tenant_id}
        )
        return {rid: Entry.decode(raw) for rid, raw in _manifest_entries(doc or {}).items()}

    async def save_manifest(
        self, tenant_id: str, source_item: str, entries: dict[str, Entry], at: datetime
    ) -> None:
        """Written last: once it is saved, this source version's records are all durable."""
        await self.db[MANIFESTS].replace_one(
            {"_id": f"{tenant_id}:{source_item}", "tenant_id": tenant_id},
            {
                "tenant_id": tenant_id,
                "source_item": source_item,
                "packed": bson.Binary(
                    zlib.compress(
                        bson.encode({rid: entry.encode() for rid, entry in entries.items()}), 1
                    )
                ),
                "count": len(entries),
                "updated_at": at,
            },
            upsert=True,
        )

    async def write(
        self,
        tenant_id: str,
        source: Source,
        created: list[Change],
        revised: list[Change],
        at: datetime,
    ) -> None:
        """History rows first, then heads: new heads inserted, revised heads replaced in batches."""
        changes = [*created, *revised]
        await self._insert_ignoring_duplicates(
            REVISIONS, [self._revision_doc(tenant_id, source, c, at) for c in changes]
        )
        for chunk in _chunks(revised, self.batch):
            ids = [f"{tenant_id}:{c.draft.record_id}" for c in chunk]
            await self.db[RECORDS].delete_many({"_id": {"$in": ids}, "tenant_id": tenant_id})
        await self._insert_ignoring_duplicates(
            RECORDS, [self._head_doc(tenant_id, source, c, at) for c in changes]
        )

    @staticmethod
    def _lineage(source: Source, locator: str) -> dict[str, Any]:
        lineage = {
            "document_id": source.document_id,
            "document_version": source.document_version,
            "locator": locator,
            "source_item_id": source.source_item_id,
        }
        if source.model is not None:
            lineage["model"] = source.model
        return lineage

    def _head_doc(
        self, tenant_id: str, source: Source, change: Change, at: datetime
    ) -> dict[str, Any]:
        draft = change.draft
        return {
            "_id": f"{tenant_id}:{draft.record_id}",
            "tenant_id": tenant_id,
            "record_id": draft.record_id,
            "record_type": draft.record_type,
            "entity_id": draft.entity_id,
            "source_item": source.source_item,
            "document_id": source.document_id,
            "status": "active",
            "revision": change.revision,
            "attributes": pairs(draft.attributes),
            "content_sha256": draft.content_sha256,
            "lineage": self._lineage(source, draft.locator),
            "updated_at": at,
        }

    def _revision_doc(
        self, tenant_id: str, source: Source, change: Change, at: datetime
    ) -> dict[str, Any]:
        """History keeps hashes and where they came from, never the content itself."""
        draft = change.draft
        return {
            "_id": f"{tenant_id}:{draft.record_id}:{change.revision}",
            "tenant_id": tenant_id,
            "record_id": draft.record_id,
            "revision": change.revision,
            "content_sha256": draft.content_sha256,
            "lineage": self._lineage(source, draft.locator),
            "observed_at": at,
        }

    async def keep_rejected(
        self, tenant_id: str, source: Source, cause: str, rejected: list[Rejection], at: datetime
    ) -> None:
        """Invalid rows are kept with their reason, per source version (idempotent)."""
        docs = [
            {
                "_id": f"{tenant_id}:{source.source_item}:{cause}:{r.locator}",
                "tenant_id": tenant_id,
                "source_item": source.source_item,
                "document_id": source.document_id,
                "document_version": source.document_version,
                "locator": r.locator,
                "reason": r.reason,
                "attributes": pairs(r.attributes),
                "rejected_at": at,
            }
            for r in rejected
        ]
        await self._insert_ignoring_duplicates(REJECTED, docs)

    async def count_attempt(self, tenant_id: str, key: str) -> int:
        """Count one more failed attempt at an input, across restarts."""
        doc = await self.db[ATTEMPTS].find_one_and_update(
            {"_id": f"{tenant_id}:{key}", "tenant_id": tenant_id},
            {"$inc": {"attempts": 1}, "$set": {"tenant_id": tenant_id}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        return int(doc["attempts"])

    async def failed_attempts(self, tenant_id: str, key: str) -> int:
        """How many attempts at an input failed before (0 when none did)."""
        doc = await self.db[ATTEMPTS].find_one(
            {"_id": f"{tenant_id}:{key}", "tenant_id": tenant_id}
        )
        return int(doc["attempts"]) if doc else 0

    async def save_import(self, tenant_id: str, import_id: str, **fields: Any) -> None:
        """The outcome of a structured import, for its status URL."""
        await self.db[IMPORTS].update_one(
            {"_id": f"{tenant_id}:{import_id}", "tenant_id": tenant_id},
            {"$set": {**fields, "tenant_id": tenant_id, "import_id": import_id}},
            upsert=True,
        )

    async def import_status(self, tenant_id: str, import_id: str) -> dict[str, Any] | None:
        """One import's outcome, only within the tenant."""
        doc: dict[str, Any] | None = await self.db[IMPORTS].find_one(
            {"_id": f"{tenant_id}:{import_id}", "tenant_id": tenant_id}, {"_id": 0}
        )
        return doc

    async def record(self, tenant_id: str, record_id: str) -> dict[str, Any] | None:
        """A record head with its revision history (hashes, timestamps, lineage)."""
        head: dict[str, Any] | None = await self.db[RECORDS].find_one(
            {"_id": f"{tenant_id}:{record_id}", "tenant_id": tenant_id}
        )
        if head is None:
            return None
        first = max(1, int(head["revision"]) - HISTORY_LIMIT + 1)
        found = await asyncio.gather(
            *(
                self.db[REVISIONS].find_one(
                    {"_id": f"{tenant_id}:{record_id}:{n}", "tenant_id": tenant_id}
                )
                for n in range(first, int(head["revision"]) + 1)
            )
        )
        head["revisions"] = [r for r in found if r]
        return head

    async def list_records(
        self,
        tenant_id: str,
        *,
        filters: dict[str, str],
        after: tuple[datetime, str] | None,
        limit: int,
    ) -> list[dict[str, Any]]:
        """Heads in (updated_at, _id) order after the cursor; equal timestamps are never skipped."""
        query: dict[str, Any] = {"tenant_id": tenant_id, **filters}
        if after is not None:
            at, last_id = after
            query["$or"] = [
                {"updated_at": {"$gt": at}},
                {"updated_at": at, "_id": {"$gt": f"{tenant_id}:{last_id}"}},
            ]
        cursor = (
            self.db[RECORDS]
            .find(query)
            .sort([("updated_at", ASCENDING), ("_id", ASCENDING)])
            .limit(limit)
        )
        return [doc async for doc in cursor]

    async def heads_by_id(self, tenant_id: str, record_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Heads looked up by `_id` (one `$in` per chunk), in the given order; missing skipped."""
        wanted = [f"{tenant_id}:{rid}" for rid in dict.fromkeys(record_ids)]
        found: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(wanted, self.batch):
            query = {"_id": {"$in": list(chunk)}, "tenant_id": tenant_id}
            found.update({doc["_id"]: doc async for doc in self.db[RECORDS].find(query)})
        return [found[key] for key in wanted if key in found]

    async def replace_with_markers(
        self, tenant_id: str, heads: list[dict[str, Any]], marker: dict[str, Any]
    ) -> None:
        """Heads become tombstone markers: ids, last revision and hash kept, content dropped."""
        markers = [
            {
                "_id": head["_id"],
                "tenant_id": tenant_id,
                "record_id": head["record_id"],
                "record_type": head.get("record_type"),
                "entity_id": head.get("entity_id"),
                "source_item": head.get("source_item"),
                "document_id": head.get("document_id"),
                "status": "tombstoned",
                "revision": head.get("revision", 1),
                "content_sha256": head.get("content_sha256"),
                "lineage": head.get("lineage"),
                "updated_at": head.get("updated_at"),
                **marker,
            }
            for head in heads
        ]
        # Heads are updated in place, never deleted and inserted: a kill between the two would
        # lose the head, and with it the marker a replay needs to announce the tombstone again.
        # One `update_many` per chunk is one transaction on the local server; a head that moved
        # under us (revised meanwhile) is written as a whole marker instead.
        for chunk in _chunks(markers, self.batch):
            ids = [m["_id"] for m in chunk]
            result = await self.db[RECORDS].update_many(
                {"_id": {"$in": ids}, "tenant_id": tenant_id},
                {"$set": {"status": "tombstoned", **marker}, "$unset": {"attributes": ""}},
            )
            if result.matched_count == len(ids):
                continue
            await asyncio.gather(
                *(
                    self.db[RECORDS].replace_one(
                        {"_id": m["_id"], "tenant_id": tenant_id}, m, upsert=True
                    )
                    for m in chunk
                )
            )


class TombstoneStore:
    """Record heads become tombstone markers: status, last revision and hashes, no content."""

    def __init__(self, records: RecordStore) -> None:
        self.records = records
        self.db = records.db

    async def heads_by_id(self, tenant_id: str, record_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Heads looked up by `_id`, in the given order; missing ones skipped."""
        return await self.records.heads_by_id(tenant_id, record_ids)

    async def heads_matching(self, query: dict[str, Any]) -> list[dict[str, Any]]:
        """Heads matching a selection query (a scan on the local server)."""
        return [doc async for doc in self.db[RECORDS].find(query)]

    async def document_record_ids(self, tenant_id: str, document_id: str) -> list[str]:
        """Every record a document's source item asserted (from its manifest)."""
        return list(await self.records.manifest(tenant_id, document_id))

    async def tombstone(
        self, tenant_id: str, heads: list[dict[str, Any]], marker: dict[str, Any]
    ) -> None:
        """Replace heads with markers (content dropped) and mark their manifest entries."""
        await self.records.replace_with_markers(tenant_id, heads, marker)
        by_source: dict[str, set[str]] = {}
        for head in heads:
            if head.get("source_item"):
                by_source.setdefault(head["source_item"], set()).add(head["record_id"])
        for source_item, record_ids in by_source.items():
            await self._mark_manifest(tenant_id, source_item, record_ids, marker["tombstoned_at"])

    async def _mark_manifest(
        self, tenant_id: str, source_item: str, record_ids: set[str], at: datetime
    ) -> None:
        """A tombstoned entry keeps its revision and fingerprint, so a replay cannot resurrect it."""
        entries = await self.records.manifest(tenant_id, source_item)
        for rid in record_ids & set(entries):
            entry = entries[rid]
            entries[rid] = Entry(entry.revision, entry.fingerprint, TOMBSTONED_CAUSE)
        await self.records.save_manifest(tenant_id, source_item, entries, at)

    async def live_among(self, tenant_id: str, record_ids: Sequence[str]) -> int:
        """How many of these records are still live (not tombstoned)."""
        heads = await self.heads_by_id(tenant_id, record_ids)
        return sum(1 for head in heads if head.get("status") != "tombstoned")
