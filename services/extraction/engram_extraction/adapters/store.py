"""Extraction's database: record heads, revision history (hashes only), manifests, rejects,
attempts and imports (their stored form is in `mapping`).

Inserts are batched with `insert_many`, heads are read by `_id`, an update touches only small
collections (manifests, imports, attempts), and a revised head is replaced by one `delete_many`
per batch plus `insert_many`, never one update per row. Listings are keyset pages over the
declared (tenant, filter, updated_at, _id) indexes.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel, ReturnDocument

from engram_extraction.adapters.mapping import (
    head_doc,
    marker_doc,
    pack_manifest,
    record_head,
    rejected_doc,
    revision_doc,
    unpack_manifest,
)
from engram_extraction.domain.heads import RecordHead
from engram_extraction.domain.records import Rejection, Source
from engram_extraction.domain.revisions import Change, Entry
from engram_extraction.domain.tombstones import Marker
from engram_platform.held import held_ids
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
        return unpack_manifest(doc)

    async def save_manifest(
        self, tenant_id: str, source_item: str, entries: dict[str, Entry], at: datetime
    ) -> None:
        """Written last: once it is saved, this source version's records are all durable."""
        await self.db[MANIFESTS].replace_one(
            {"_id": f"{tenant_id}:{source_item}", "tenant_id": tenant_id},
            {
                "tenant_id": tenant_id,
                "source_item": source_item,
                "packed": pack_manifest(entries),
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
            REVISIONS, [revision_doc(tenant_id, source, c, at) for c in changes]
        )
        for chunk in _chunks(revised, self.batch):
            ids = [f"{tenant_id}:{c.draft.record_id}" for c in chunk]
            await self.db[RECORDS].delete_many({"_id": {"$in": ids}, "tenant_id": tenant_id})
        await self._insert_ignoring_duplicates(
            RECORDS, [head_doc(tenant_id, source, c, at) for c in changes]
        )

    async def keep_rejected(
        self, tenant_id: str, source: Source, cause: str, rejected: list[Rejection], at: datetime
    ) -> None:
        """Invalid rows are kept with their reason, per source version (idempotent)."""
        docs = [rejected_doc(tenant_id, source, cause, r, at) for r in rejected]
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

    async def known(self, tenant_id: str, record_ids: Sequence[str]) -> set[str]:
        """Which of these records the tenant has (tombstoned ones too: their id stays theirs)."""
        return set(await held_ids(self.db[RECORDS], tenant_id, record_ids))

    async def record(self, tenant_id: str, record_id: str) -> RecordHead | None:
        """A record head (attributes by name) with its revision history (hashes, timestamps,
        lineage)."""
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
        return record_head(head, [r for r in found if r])

    async def list_records(
        self,
        tenant_id: str,
        *,
        filters: dict[str, str],
        after: tuple[datetime, str] | None,
        limit: int,
    ) -> list[RecordHead]:
        """Heads (attributes by name) in (updated_at, _id) order after the cursor; equal
        timestamps are never skipped."""
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
        return [record_head(doc) async for doc in cursor]

    async def heads_by_id(self, tenant_id: str, record_ids: Sequence[str]) -> list[RecordHead]:
        """Heads looked up by `_id` (one `$in` per chunk), in the given order; missing skipped."""
        wanted = [f"{tenant_id}:{rid}" for rid in dict.fromkeys(record_ids)]
        found: dict[str, RecordHead] = {}
        for chunk in _chunks(wanted, self.batch):
            query = {"_id": {"$in": list(chunk)}, "tenant_id": tenant_id}
            found.update(
                {doc["_id"]: record_head(doc) async for doc in self.db[RECORDS].find(query)}
            )
        return [found[key] for key in wanted if key in found]

    async def live_among(self, tenant_id: str, record_ids: Sequence[str]) -> int:
        """How many of these records are still live (not tombstoned)."""
        heads = await self.heads_by_id(tenant_id, record_ids)
        return sum(1 for head in heads if not head.tombstoned)

    async def replace_with_markers(
        self, tenant_id: str, heads: list[RecordHead], marker: Marker
    ) -> None:
        """Heads become tombstone markers: ids, last revision and hash kept, content dropped."""
        markers = [marker_doc(tenant_id, head, marker) for head in heads]
        # Heads are updated in place, never deleted and inserted: a kill between the two would
        # lose the head, and with it the marker a replay needs to announce the tombstone again.
        # One `update_many` per chunk is one transaction on the local server; a head that moved
        # under us (revised meanwhile) is written as a whole marker instead.
        for chunk in _chunks(markers, self.batch):
            ids = [m["_id"] for m in chunk]
            result = await self.db[RECORDS].update_many(
                {"_id": {"$in": ids}, "tenant_id": tenant_id},
                {
                    "$set": {"status": "tombstoned", **dataclasses.asdict(marker)},
                    "$unset": {"attributes": ""},
                },
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
