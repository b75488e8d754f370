"""Taking a submitted document in: its bytes and version stored, then `document.ingested`."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import DOCUMENT_INGESTED
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.documents import DocumentIngested, DocumentSubmitted
from engram_ingest.ports import DocumentWrites


class Intake:
    """Stores documents once and announces them only after the write is durable."""

    def __init__(self, store: DocumentWrites) -> None:
        self.store = store

    async def take(self, event: Envelope[DocumentSubmitted], content: bytes) -> list[Envelope[Any]]:
        """Store the bytes and the version; a version already extracted is not re-announced."""
        doc = event.payload
        tenant = event.tenant_id
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
        if entry and entry.status == "extracted":
            return []
        if entry and entry.status == "failed":
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

    async def dead_lettered(
        self, event: Envelope[DocumentSubmitted], letter: DeadLetter
    ) -> list[Envelope[Any]]:
        """A submission the consumer dead-lettered leaves its version `failed` with the reason:
        the document is recorded by its ids only (its bytes and name may be what was refused)."""
        doc = event.payload
        tenant = event.tenant_id
        meta = {"source": doc.source, "source_item_id": doc.source_item_id}
        await self.store.record_version(tenant, doc.document_id, doc.version, meta)
        entry = await self.store.extract_entry(tenant, doc.document_id, doc.version)
        if entry and entry.status == "extracted":
            return []
        await self.store.record_outcome(
            tenant,
            doc.document_id,
            doc.version,
            {
                "status": "failed",
                "attempts": letter.attempts,
                "last_error": letter.item_reason(),
                "permanent": True,
            },
        )
        return []
