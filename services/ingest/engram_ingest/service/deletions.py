"""Deleting a document: marked deleted, raw content dropped, tombstoned downstream."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.acks import tombstone_applied
from engram_events.catalog import DOCUMENT_TOMBSTONED
from engram_events.payloads.documents import DocumentDeleted, DocumentTombstoned
from engram_ingest.ports import DocumentWrites

SERVICE = "ingest"


class Deletions:
    """Turns `document.deleted` into `document.tombstoned` (and a prune job's acknowledgement)."""

    def __init__(self, store: DocumentWrites) -> None:
        self.store = store

    async def delete(self, event: Envelope[DocumentDeleted]) -> list[Envelope[Any]]:
        """Mark the document deleted, drop its raw content, and tombstone it downstream.

        A prune job always gets its acknowledgement, even for a document ingest never stored,
        so the job can finish and report what it found.
        """
        deleted = event.payload
        hashes = await self.store.mark_deleted(event.tenant_id, deleted.document_id)
        if hashes is None and deleted.prune_job_id is None:
            return []
        tombstone = DocumentTombstoned(
            document_id=deleted.document_id,
            reason=deleted.reason,
            prune_job_id=deleted.prune_job_id,
            content_sha256=hashes[-1] if hashes else None,
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
                    service=SERVICE,
                    counts={"documents": 1 if hashes is not None else 0},
                    tombstoned_ids=[deleted.document_id] if hashes is not None else [],
                    source_ids=[deleted.document_id],
                )
            )
        return events
