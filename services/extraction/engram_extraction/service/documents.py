"""Extracting a document version into records and passages, or recording why it cannot be.

Prose (Markdown, plain text, PDF, Word, HTML) is also split into passages (`domain.reading`),
written and announced with the records; a prose document with passages and no records is
extracted, not failed.

A document whose content cannot be read fails at once with its reason; any other failure is
retried by the consumer and, on the last attempt, recorded as `document.extraction_failed`
before the input is dead-lettered.

When the optional LLM extractor is configured, text no built-in extractor can read (see
`domain.extractors`) is sent to the model inside the retried step: an unreachable endpoint is
retried and then dead-lettered; a reply that is not the promised JSON fails the document at
once. Its rows go through the same validation as every other extractor's. A document with
passages is sent as its numbered passages, and each row cites (`Lineage.passage_ids`) the ones
the model says it was read from, by the same ids the passages are announced with.
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import DOCUMENT_EXTRACTED, DOCUMENT_EXTRACTION_FAILED
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.documents import (
    DocumentExtracted,
    DocumentExtractionFailed,
    DocumentIngested,
)
from engram_extraction.domain.candidates import Extraction, ExtractionFailed, Limits
from engram_extraction.domain.extractors import bounded
from engram_extraction.domain.llm import LlmOptions, read_reply, request_body
from engram_extraction.domain.naming import short_hash, type_from_file_name
from engram_extraction.domain.passages import Passage, passage_id
from engram_extraction.domain.reading import Reading, read
from engram_extraction.domain.records import Source, build
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.ports import Outbox, PassageWrites, RecordWrites, TypeResolver, registry_for
from engram_extraction.service.attempts import FailureRecord
from engram_extraction.service.passages import PassageWriter
from engram_extraction.service.recording import RecordWriter
from engram_platform.chat import ChatModel, ModelFailed

log = logging.getLogger(__name__)
Events = list[Envelope[Any]]


class DocumentExtraction:
    """Turns document versions into records; idempotent on deterministic ids."""

    def __init__(
        self,
        store: RecordWrites,
        registry: SchemaRegistry | TypeResolver,
        outbox: Outbox,
        *,
        passages: PassageWrites,
        limits: Limits | None = None,
        max_attempts: int = 5,
        model: ChatModel | None = None,
        model_options: LlmOptions | None = None,
    ) -> None:
        if (model is None) != (model_options is None):
            raise ValueError("the LLM extractor needs both its endpoint and its options")
        self.store = store
        self.registry = registry
        self.limits = limits or Limits()
        self.model = model
        self.model_options = model_options
        self.writer = RecordWriter(store, outbox)
        self.passages = PassageWriter(passages)
        self.failures = FailureRecord(store, outbox, max_attempts)

    async def extract(self, event: Envelope[DocumentIngested]) -> Events:
        """Extract a document version into records, or record why it cannot be."""
        doc = event.payload
        try:
            content = base64.b64decode(doc.content_base64, validate=True)
            reading = read(content, doc.mime, doc.name, self.limits, defer=self.model is not None)
        except (binascii.Error, ValueError):
            return [failed(event, "content_base64 is not valid base64", 1)]
        except ExtractionFailed as exc:
            log.info(
                "document cannot be extracted",
                extra={"document_id": doc.document_id, "version": doc.version},
            )
            return [failed(event, str(exc), 1)]

        async def apply() -> Events:
            registry = await registry_for(self.registry, event.tenant_id)
            try:
                extraction = await self._by_model(event, reading, registry)
            except ExtractionFailed as exc:
                log.info(
                    "document cannot be extracted by the model",
                    extra={"document_id": doc.document_id, "version": doc.version},
                )
                attempt = await self.store.failed_attempts(event.tenant_id, str(event.event_id))
                return [failed(event, str(exc), attempt + 1)]
            return await self._record(event, extraction, reading.passages, registry)

        return await self.failures.run(event, apply, self._exhausted)

    async def _record(
        self,
        event: Envelope[DocumentIngested],
        extraction: Extraction,
        passages: list[Passage],
        registry: SchemaRegistry,
    ) -> Events:
        """The extraction's records and passages written and announced, then the document's
        summary."""
        doc = event.payload
        source = Source(
            tenant_id=event.tenant_id,
            source_item=doc.document_id,
            default_type=type_from_file_name(doc.name),
            document_id=doc.document_id,
            document_version=doc.version,
            source_item_id=doc.source_item_id,
            model=extraction.model,
        )
        built = build(extraction.candidates, source, registry)
        done, events = await self.writer.apply(event, source, short_hash(doc.version), built)
        events.extend(await self.passages.apply(event, passages))
        summary = DocumentExtracted(
            document_id=doc.document_id,
            version=doc.version,
            record_count=len(built.drafts),
            rejected_count=len(built.rejected),
            unchanged_count=done.unchanged,
            extractor=extraction.extractor,
            attempts=await self.store.failed_attempts(event.tenant_id, str(event.event_id)) + 1,
            passage_count=len(passages),
        )
        events.append(
            new_event(
                DOCUMENT_EXTRACTED,
                summary,
                tenant_id=event.tenant_id,
                caused_by=event,
                event_id=derive_event_id(event.event_id, "extracted"),
            )
        )
        log.info(
            "document extracted",
            extra={
                "document_id": doc.document_id,
                "version": doc.version,
                "record_count": len(built.drafts),
                "rejected_count": len(built.rejected),
                "announced_count": len(done.announced),
                "absent_count": len(done.absent),
                "extractor": extraction.extractor,
                "passage_count": len(passages),
            },
        )
        return events

    async def _by_model(
        self, event: Envelope[Any], reading: Reading, registry: SchemaRegistry
    ) -> Extraction:
        """A built-in extraction as it is, or the model's reading of unstructured text (which
        may find no rows when the document has passages)."""
        found = reading.found
        if isinstance(found, Extraction):
            return found
        assert self.model is not None and self.model_options is not None
        doc = event.payload
        try:
            body = request_body(found.text, registry, self.model_options, reading.passages)
        except ExtractionFailed:
            if not reading.passages:
                raise
            log.info(
                "document too long for the model; kept as passages only",
                extra={"document_id": doc.document_id, "input_chars": len(found.text)},
            )
            return Extraction("passages", [])
        try:
            reply = await self.model.complete(body)
        except ModelFailed as refused:
            raise ExtractionFailed(str(refused)) from None
        log.info(
            "model replied",
            extra={
                "document_id": doc.document_id,
                "version": doc.version,
                "model": reply.model,
                "deferred_because": found.why,
                "input_chars": len(found.text),
                "passage_count": len(reading.passages),
                "output_sha256": reply.output_sha256,
                "finish_reason": reply.finish_reason,
            },
        )
        ids = [
            passage_id(event.tenant_id, doc.document_id, doc.version, p.start, p.end)
            for p in reading.passages
        ]
        extraction = read_reply(reply, self.limits, ids)
        if ids:
            log.info(
                "model rows cite passages",
                extra={
                    "document_id": doc.document_id,
                    "version": doc.version,
                    "row_count": len(extraction.candidates),
                    "cited_count": sum(1 for c in extraction.candidates if c.passage_ids),
                    "unknown_citations": extraction.unknown_citations,
                },
            )
        return bounded(extraction, self.limits, allow_empty=bool(reading.passages))

    async def dead_lettered(self, event: Envelope[DocumentIngested], letter: DeadLetter) -> Events:
        """A version the consumer dead-lettered fails visibly, with the letter's reason."""
        return [failed(event, letter.item_reason(), letter.attempts, permanent=True)]

    async def _exhausted(self, event: Envelope[Any], reason: str, attempts: int) -> Events:
        """The document's visible failure: ingest records it in the extract log."""
        return [failed(event, reason, attempts, permanent=False)]


def failed(
    event: Envelope[DocumentIngested], reason: str, attempt: int, *, permanent: bool = True
) -> Envelope[Any]:
    """`document.extraction_failed` with the reason (never the content)."""
    failure = DocumentExtractionFailed(
        document_id=event.payload.document_id,
        version=event.payload.version,
        attempt=attempt,
        error=reason[:1000],
        permanent=permanent,
    )
    return new_event(
        DOCUMENT_EXTRACTION_FAILED,
        failure,
        tenant_id=event.tenant_id,
        caused_by=event,
        event_id=derive_event_id(event.event_id, "extraction_failed"),
    )
