"""Ingest's handlers: one typed input each, returning what to publish."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.acks import tombstone_applied
from engram_events.catalog import DOCUMENT_INGESTED, DOCUMENT_TOMBSTONED
from engram_events.payloads.documents import (
    DocumentDeleted,
    DocumentExtracted,
    DocumentExtractionFailed,
    DocumentIngested,
    DocumentSubmitted,
    DocumentTombstoned,
)
from engram_ingest.adapters.store import IngestStore
from engram_ingest.domain.content import decode_content


class IngestHandlers:
    """Stores documents once and announces them only after the write is durable."""

    def __init__(self, store: IngestStore) -> None:
        self.store = store

    async def on_submitted(self, event: Envelope[DocumentSubmitted]) -> list[Envelope[Any]]:
        """Store the bytes and the version; a version already extracted is not re-announced."""
        doc = event.payload
        tenant = event.tenant_id
        content = decode_content(doc.content_base64, doc.content_sha256, doc.size_bytes)
        await self.store.put_blob(tenant, doc.content_sha256, content)
        meta = {
            "name": doc.name,
            "mime": doc.mime,
            "source": doc.source,
            "source_item_id": doc.source_item_id,
        }
        await self.store.record_version(tenant, doc.document_id, doc.version, meta)
        await self.store.add_content_hash(tenant, doc.document_id, doc.content_sha256)
        entry = await self.store.extract_entry(tenant, doc.document_id, doc.version)
        if entry and entry.get("status") == "extracted":
            return []
        if entry and entry.get("status") == "failed":
            await self.store.reopen(tenant, doc.document_id, doc.version)
        ingested = DocumentIngested(
            document_id=doc.document_id,
            version=doc.version,
            source=doc.source,
            source_item_id=doc.source_item_id,
            name=doc.name,
            mime=doc.mime,
            content_sha256=doc.content_sha256,
            size_bytes=doc.size_bytes,
            content_base64=doc.content_base64,
        )
        return [
            new_event(
                DOCUMENT_INGESTED,
                ingested,
                tenant_id=tenant,
                caused_by=event,
                event_id=derive_event_id(event.event_id, "ingested"),
            )
        ]

    async def on_deleted(self, event: Envelope[DocumentDeleted]) -> list[Envelope[Any]]:
        """Mark the document deleted, drop its raw content, and tombstone it downstream.

        A prune job always gets its acknowledgement, even for a document ingest never stored,
        so the job can finish and report what it found.
        """
        deleted = event.payload
        doc = await self.store.mark_deleted(event.tenant_id, deleted.document_id)
        if doc is None and deleted.prune_job_id is None:
            return []
        hashes = (doc or {}).get("content_hashes") or [None]
        tombstone = DocumentTombstoned(
            document_id=deleted.document_id,
            reason=deleted.reason,
            prune_job_id=deleted.prune_job_id,
            content_sha256=hashes[-1],
        )
        events: list[Envelope[Any]] = [
            new_event(
                DOCUMENT_TOMBSTONED,
                tombstone,
                tenant_id=event.tenant_id,
                caused_by=event,
                event_id=derive_event_id(event.event_id, "tombstoned"),
            )
        ]
        if deleted.prune_job_id is not None:
            events.append(
                tombstone_applied(
                    event,
                    prune_job_id=deleted.prune_job_id,
                    service="ingest",
                    counts={"documents": 1 if doc is not None else 0},
                    tombstoned_ids=[deleted.document_id] if doc is not None else [],
                    source_ids=[deleted.document_id],
                )
            )
        return events

    async def on_extracted(self, event: Envelope[DocumentExtracted]) -> list[Envelope[Any]]:
        """A version's records are durable: it dedups from now on (only successes dedup)."""
        done = event.payload
        await self.store.record_outcome(
            event.tenant_id,
            done.document_id,
            done.version,
            {
                "status": "extracted",
                "attempts": done.attempts,
                "last_error": None,
                "record_count": done.record_count,
                "rejected_count": done.rejected_count,
                "unchanged_count": done.unchanged_count,
                "extractor": done.extractor,
            },
        )
        return []

    async def on_extraction_failed(
        self, event: Envelope[DocumentExtractionFailed]
    ) -> list[Envelope[Any]]:
        """A version extraction gave up on shows `failed` with its reason; a resubmission retries it."""
        failed = event.payload
        await self.store.record_outcome(
            event.tenant_id,
            failed.document_id,
            failed.version,
            {
                "status": "failed",
                "attempts": failed.attempt,
                "last_error": failed.error,
                "permanent": failed.permanent,
            },
        )
        return []
