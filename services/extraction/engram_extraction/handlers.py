"""Extraction's handlers: one typed input each, returning what to publish."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.documents import DocumentIngested, DocumentTombstoned
from engram_events.payloads.prune import PruneRequested
from engram_events.payloads.records import (
    FactEditRequested,
    RecordsImportRequested,
    RecordsRestoreRequested,
)
from engram_extraction.service.documents import DocumentExtraction
from engram_extraction.service.edits import HumanEdits
from engram_extraction.service.imports import RecordImports
from engram_extraction.service.passages import PassageWriter
from engram_extraction.service.restores import RecordRestores
from engram_extraction.service.tombstones import Tombstoning

Events = list[Envelope[Any]]


class ExtractionHandlers:
    """Each input to its use case; what the use case announces is what gets published."""

    def __init__(
        self,
        documents: DocumentExtraction,
        imports: RecordImports,
        tombstoning: Tombstoning,
        passages: PassageWriter,
        edits: HumanEdits | None = None,
        restores: RecordRestores | None = None,
    ) -> None:
        self.documents = documents
        self.restores = restores
        self.edits = edits
        self.passages = passages
        self.imports = imports
        self.tombstoning = tombstoning

    async def on_ingested(self, event: Envelope[DocumentIngested]) -> Events:
        """A document version becomes records, or a visible failure."""
        return await self.documents.extract(event)

    async def on_ingested_dead_lettered(
        self, event: Envelope[DocumentIngested], letter: DeadLetter
    ) -> Events:
        """A version the consumer gave up on still fails visibly."""
        return await self.documents.dead_lettered(event, letter)

    async def on_import_dead_lettered(
        self, event: Envelope[RecordsImportRequested], letter: DeadLetter
    ) -> Events:
        """An import the consumer gave up on still fails visibly."""
        return await self.imports.dead_lettered(event, letter)

    async def on_import_requested(self, event: Envelope[RecordsImportRequested]) -> Events:
        """Structured rows become records."""
        return await self.imports.import_rows(event)

    async def on_fact_edit_requested(self, event: Envelope[FactEditRequested]) -> Events:
        """A curator's edit becomes a record of source `human`."""
        if self.edits is None:
            return []
        return await self.edits.apply(event)

    async def on_restore_requested(self, event: Envelope[RecordsRestoreRequested]) -> Events:
        """An import's records, kept as the export held them."""
        if self.restores is None:
            return []
        return await self.restores.restore(event)

    async def on_prune_requested(self, event: Envelope[PruneRequested]) -> Events:
        """The job's selection is tombstoned and the job acknowledged."""
        return await self.tombstoning.prune(event)

    async def on_document_tombstoned(self, event: Envelope[DocumentTombstoned]) -> Events:
        """A deleted document takes every record it asserted and every passage with it."""
        withdrawn = await self.passages.document_gone(event)
        return withdrawn + await self.tombstoning.document_gone(event)
