"""Ingest's handlers: one typed input each, returning what to publish."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.documents import (
    DocumentDeleted,
    DocumentExtracted,
    DocumentExtractionFailed,
    DocumentSubmitted,
)
from engram_ingest.domain.content import decode_content
from engram_ingest.service.deletions import Deletions
from engram_ingest.service.extract_log import ExtractLog
from engram_ingest.service.intake import Intake


class IngestHandlers:
    """Decode each input, run its use case, return what it announces."""

    def __init__(self, intake: Intake, deletions: Deletions, extract_log: ExtractLog) -> None:
        self.intake = intake
        self.deletions = deletions
        self.extract_log = extract_log

    async def on_submitted(self, event: Envelope[DocumentSubmitted]) -> list[Envelope[Any]]:
        """Bytes that are not what the submitter declared fail at once (a permanent error)."""
        doc = event.payload
        content = decode_content(doc.content_base64, doc.content_sha256, doc.size_bytes)
        return await self.intake.take(event, content)

    async def on_submitted_dead_lettered(
        self, event: Envelope[DocumentSubmitted], letter: DeadLetter
    ) -> list[Envelope[Any]]:
        """A submission the consumer gave up on still fails visibly."""
        return await self.intake.dead_lettered(event, letter)

    async def on_deleted(self, event: Envelope[DocumentDeleted]) -> list[Envelope[Any]]:
        """The document goes, and with it everything downstream derived from it."""
        return await self.deletions.delete(event)

    async def on_extracted(self, event: Envelope[DocumentExtracted]) -> list[Envelope[Any]]:
        """The version is extracted; nothing to announce."""
        await self.extract_log.extracted(event.tenant_id, event.payload)
        return []

    async def on_extraction_failed(
        self, event: Envelope[DocumentExtractionFailed]
    ) -> list[Envelope[Any]]:
        """The version failed; nothing to announce."""
        await self.extract_log.failed(event.tenant_id, event.payload)
        return []
