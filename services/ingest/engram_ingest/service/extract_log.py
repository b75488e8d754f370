"""Extraction's verdict on each document version, kept in the extract log."""

from __future__ import annotations

from engram_events.payloads.documents import DocumentExtracted, DocumentExtractionFailed
from engram_ingest.ports import DocumentWrites


class ExtractLog:
    """Records `extracted` (a version dedups from then on) or `failed` with its reason."""

    def __init__(self, store: DocumentWrites) -> None:
        self.store = store

    async def extracted(self, tenant_id: str, done: DocumentExtracted) -> None:
        """A version's records are durable: it dedups from now on (only successes dedup)."""
        await self.store.record_outcome(
            tenant_id,
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

    async def failed(self, tenant_id: str, failed: DocumentExtractionFailed) -> None:
        """A version extraction gave up on shows `failed` with its reason; a resubmission retries it."""
        await self.store.record_outcome(
            tenant_id,
            failed.document_id,
            failed.version,
            {
                "status": "failed",
                "attempts": failed.attempt,
                "last_error": failed.error,
                "permanent": failed.permanent,
            },
        )
