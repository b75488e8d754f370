"""Prunes and deletions in the database: record heads replaced with markers, manifests told."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from engram_events.payloads.prune import PruneSelector
from engram_extraction.adapters.mapping import record_head
from engram_extraction.adapters.store import RECORDS, RecordStore
from engram_extraction.domain.heads import RecordHead
from engram_extraction.domain.revisions import TOMBSTONED_CAUSE, Entry
from engram_extraction.domain.selection import mongo_filter
from engram_extraction.domain.tombstones import Marker


class TombstoneStore:
    """Record heads become tombstone markers: status, last revision and hashes, no content."""

    def __init__(self, records: RecordStore) -> None:
        self.records = records
        self.db = records.db

    async def heads_by_id(self, tenant_id: str, record_ids: Sequence[str]) -> list[RecordHead]:
        """Heads looked up by `_id`, in the given order; missing ones skipped."""
        return await self.records.heads_by_id(tenant_id, record_ids)

    async def selected_heads(
        self, tenant_id: str, selector: PruneSelector, now: datetime
    ) -> list[RecordHead]:
        """Live heads the selector's query matches (a scan on the local server)."""
        query = mongo_filter(tenant_id, selector, now)
        return [record_head(doc) async for doc in self.db[RECORDS].find(query)]

    async def job_markers(self, tenant_id: str, prune_job_id: str) -> list[RecordHead]:
        """Heads this prune job already tombstoned (found again when its request is replayed)."""
        query = {"tenant_id": tenant_id, "prune_job_id": prune_job_id}
        return [record_head(doc) async for doc in self.db[RECORDS].find(query)]

    async def document_record_ids(self, tenant_id: str, document_id: str) -> list[str]:
        """Every record a document's source item asserted (from its manifest)."""
        return list(await self.records.manifest(tenant_id, document_id))

    async def tombstone(self, tenant_id: str, heads: list[RecordHead], marker: Marker) -> None:
        """Replace heads with markers (content dropped) and mark their manifest entries."""
        await self.records.replace_with_markers(tenant_id, heads, marker)
        by_source: dict[str, set[str]] = {}
        for head in heads:
            if head.source_item:
                by_source.setdefault(head.source_item, set()).add(head.record_id)
        for source_item, record_ids in by_source.items():
            await self._mark_manifest(tenant_id, source_item, record_ids, marker.tombstoned_at)

    async def _mark_manifest(
        self, tenant_id: str, source_item: str, record_ids: set[str], at: datetime
    ) -> None:
        """A tombstoned entry keeps its revision and fingerprint, so a replay cannot resurrect it."""
        entries = await self.records.manifest(tenant_id, source_item)
        for rid in record_ids & set(entries):
            entry = entries[rid]
            entries[rid] = Entry(entry.revision, entry.fingerprint, TOMBSTONED_CAUSE)
        await self.records.save_manifest(tenant_id, source_item, entries, at)
