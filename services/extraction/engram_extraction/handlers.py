"""Extraction's handlers: one typed input each, returning what to publish.

Records are written (history, heads, then the source's manifest) before any event is
returned, so `record.upserted` and the compacted `record.state` only announce durable
records. A document whose content cannot be read fails at once with its reason; any other
failure is retried by the consumer and, on the last attempt, recorded as
`document.extraction_failed` before the input is dead-lettered.

A document version is everything its source item now asserts: records an earlier version
produced and this one does not are tombstoned (`absent_from_version`) through the same path
as a prune, before the manifest that remembers it is saved. Imports add rows and retire none.

When the optional LLM extractor is configured, text no built-in extractor can read (see
`domain.extractors`) is sent to the model inside the retried step: an unreachable endpoint is
retried and then dead-lettered; a reply that is not the promised JSON fails the document at
once. Its rows go through the same validation as every other extractor's.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import (
    DOCUMENT_EXTRACTED,
    DOCUMENT_EXTRACTION_FAILED,
    RECORD_STATE,
    RECORD_UPSERTED,
)
from engram_events.payloads.documents import (
    DocumentExtracted,
    DocumentExtractionFailed,
    DocumentIngested,
)
from engram_events.payloads.records import Lineage, RecordsImportRequested, RecordUpserted
from engram_extraction.adapters.store import RecordStore
from engram_extraction.domain.candidates import (
    Candidate,
    Extraction,
    ExtractionFailed,
    Limits,
    check_values,
)
from engram_extraction.domain.extractors import (
    Unstructured,
    bounded,
    extract,
    extract_or_defer,
)
from engram_extraction.domain.llm import LlmOptions, read_reply, request_body
from engram_extraction.domain.naming import short_hash, type_from_file_name
from engram_extraction.domain.records import Built, Source, build
from engram_extraction.domain.revisions import Change, Plan, plan
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.tombstones import kafka_tombstones, marker, record_tombstoned
from engram_platform.chat import ChatModel, ModelFailed
from engram_platform.outbox import Outbox
from engram_platform.retry import PermanentError

log = logging.getLogger(__name__)
Events = list[Envelope[Any]]


class ExtractionHandlers:
    """Turns documents and imports into records; idempotent on deterministic ids."""

    def __init__(
        self,
        store: RecordStore,
        registry: SchemaRegistry,
        outbox: Outbox,
        *,
        limits: Limits | None = None,
        max_attempts: int = 5,
        model: ChatModel | None = None,
        model_options: LlmOptions | None = None,
    ) -> None:
        if (model is None) != (model_options is None):
            raise ValueError("the LLM extractor needs both its endpoint and its options")
        self.store = store
        self.registry = registry
        self.outbox = outbox
        self.limits = limits or Limits()
        self.max_attempts = max_attempts
        self.model = model
        self.model_options = model_options

    async def on_ingested(self, event: Envelope[DocumentIngested]) -> Events:
        """Extract a document version into records, or record why it cannot be."""
        doc = event.payload
        try:
            content = base64.b64decode(doc.content_base64, validate=True)
            if self.model is None:
                found: Extraction | Unstructured = extract(content, doc.mime, doc.name, self.limits)
            else:
                found = extract_or_defer(content, doc.mime, doc.name, self.limits)
        except (binascii.Error, ValueError):
            return [self._failed(event, "content_base64 is not valid base64", 1)]
        except ExtractionFailed as exc:
            log.info(
                "document cannot be extracted",
                extra={"document_id": doc.document_id, "version": doc.version},
            )
            return [self._failed(event, str(exc), 1)]

        async def apply() -> Events:
            try:
                extraction = await self._by_model(event, found)
            except ExtractionFailed as exc:
                log.info(
                    "document cannot be extracted by the model",
                    extra={"document_id": doc.document_id, "version": doc.version},
                )
                attempt = await self.store.failed_attempts(event.tenant_id, str(event.event_id))
                return [self._failed(event, str(exc), attempt + 1)]
            source = Source(
                tenant_id=event.tenant_id,
                source_item=doc.document_id,
                default_type=type_from_file_name(doc.name),
                document_id=doc.document_id,
                document_version=doc.version,
                source_item_id=doc.source_item_id,
                model=extraction.model,
            )
            built = build(extraction.candidates, source, self.registry)
            done, events = await self._apply(event, source, short_hash(doc.version), built)
            summary = DocumentExtracted(
                document_id=doc.document_id,
                version=doc.version,
                record_count=len(built.drafts),
                rejected_count=len(built.rejected),
                unchanged_count=done.unchanged,
                extractor=extraction.extractor,
                attempts=await self.store.failed_attempts(event.tenant_id, str(event.event_id)) + 1,
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
                },
            )
            return events

        return await self._with_failure_record(event, apply, on_exhausted=self._document_exhausted)

    async def on_import_requested(self, event: Envelope[RecordsImportRequested]) -> Events:
        """Structured rows become records the same way, without an extractor."""
        request = event.payload
        source = Source(
            tenant_id=event.tenant_id,
            source_item=f"import:{request.source}",
            default_type=request.record_type,
            source_item_id=request.source,
            key_field=request.key_field,
            forced_type=request.record_type,
        )
        candidates = [
            check_values(Candidate(f"rows[{i}]", dict(row)), self.limits)
            for i, row in enumerate(request.rows)
        ]

        async def apply() -> Events:
            built = build(candidates, source, self.registry)
            done, events = await self._apply(
                event, source, short_hash(f"import:{request.import_id}"), built
            )
            await self.store.save_import(
                event.tenant_id,
                request.import_id,
                status="completed",
                record_count=len(built.drafts),
                rejected_count=len(built.rejected),
                unchanged_count=done.unchanged,
                rejected=[{"locator": r.locator, "reason": r.reason} for r in built.rejected[:100]],
                completed_at=datetime.now(UTC),
            )
            return events

        return await self._with_failure_record(event, apply, on_exhausted=self._import_exhausted)

    async def _by_model(self, event: Envelope[Any], found: Extraction | Unstructured) -> Extraction:
        """A built-in extraction as it is, or the model's reading of unstructured text."""
        if isinstance(found, Extraction):
            return found
        assert self.model is not None and self.model_options is not None
        doc = event.payload
        body = request_body(found.text, self.registry, self.model_options)
        try:
            reply = await self.model.complete(body)
        except ModelFailed as refused:
            raise ExtractionFailed(str(refused)) from None
        output_sha = reply.output_sha256
        log.info(
            "model replied",
            extra={
                "document_id": doc.document_id,
                "version": doc.version,
                "model": reply.model,
                "deferred_because": found.why,
                "input_chars": len(found.text),
                "output_sha256": output_sha,
                "finish_reason": reply.finish_reason,
            },
        )
        return bounded(read_reply(reply, self.limits), self.limits)

    async def _apply(
        self, event: Envelope[Any], source: Source, cause: str, built: Built
    ) -> tuple[Plan, Events]:
        """Plan revisions, write history and heads, retire absent records, save the manifest.

        A document version is complete, so records it no longer asserts are retired; the
        manifest is saved last, so a crash before it replays the same plan.
        """
        now = datetime.now(UTC)
        manifest = await self.store.manifest(event.tenant_id, source.source_item)
        done = plan(built.drafts, manifest, cause, complete=source.document_id is not None)
        await self.store.write(event.tenant_id, source, done.created, done.revised, now)
        await self.store.keep_rejected(event.tenant_id, source, cause, built.rejected, now)
        retired = await self._retire(event, done.absent)
        if done.changed:
            await self.store.save_manifest(event.tenant_id, source.source_item, done.manifest, now)
        events: Events = []
        for change in done.announced:
            events.extend(self._record_events(event, source, change, now))
        events.extend(retired)
        return done, events

    async def _retire(self, event: Envelope[Any], record_ids: list[str]) -> Events:
        """Absent records become markers (a prune's marker is kept), with Kafka tombstones staged.

        Event and entry ids derive from the record and its last revision, so a replay, or a
        record a prune already tombstoned, stages the same ids again.
        """
        if not record_ids:
            return []
        heads = await self.store.heads_by_id(event.tenant_id, record_ids)
        live = [head for head in heads if head.get("status") != "tombstoned"]
        await self.store.replace_with_markers(
            event.tenant_id, live, marker("absent_from_version", None)
        )
        await self.outbox.stage_entries(kafka_tombstones(self.outbox, heads))
        log.info(
            "records absent from the new version tombstoned",
            extra={"count": len(heads), "newly": len(live), "reason": "absent_from_version"},
        )
        return [record_tombstoned(event, head, "absent_from_version", None) for head in heads]

    def _record_events(
        self, event: Envelope[Any], source: Source, change: Change, at: datetime
    ) -> Events:
        """`record.upserted` for consumers and `record.state` for the compacted topic."""
        draft = change.draft
        payload = RecordUpserted(
            record_id=draft.record_id,
            record_type=draft.record_type,
            entity_id=draft.entity_id,
            revision=change.revision,
            attributes=draft.attributes,
            content_sha256=draft.content_sha256,
            lineage=Lineage(
                document_id=source.document_id,
                document_version=source.document_version,
                locator=draft.locator,
                source_item_id=source.source_item_id,
                model=source.model,
            ),
            observed_at=at,
        )
        return [
            new_event(
                event_type,
                payload,
                tenant_id=event.tenant_id,
                caused_by=event,
                event_id=derive_event_id(draft.record_id, f"{what}:{change.revision}"),
            )
            for event_type, what in ((RECORD_UPSERTED, "upserted"), (RECORD_STATE, "state"))
        ]

    async def _with_failure_record(
        self,
        event: Envelope[Any],
        apply: Callable[[], Awaitable[Events]],
        *,
        on_exhausted: Callable[[Envelope[Any], str, int], Awaitable[Events]],
    ) -> Events:
        """Let the consumer retry; on the last attempt stage the failure, then dead-letter."""
        try:
            return await apply()
        except Exception as exc:
            attempts = await self.store.count_attempt(event.tenant_id, str(event.event_id))
            if attempts < self.max_attempts:
                raise
            reason = f"extraction failed after {attempts} attempts ({type(exc).__name__})"
            await self.outbox.stage(await on_exhausted(event, reason, attempts))
            raise PermanentError(reason) from exc

    async def _document_exhausted(self, event: Envelope[Any], reason: str, attempts: int) -> Events:
        """The document's visible failure: ingest records it in the extract log."""
        return [self._failed(event, reason, attempts, permanent=False)]

    async def _import_exhausted(self, event: Envelope[Any], reason: str, attempts: int) -> Events:
        """An import's failure is visible at its status URL."""
        await self.store.save_import(
            event.tenant_id,
            event.payload.import_id,
            status="failed",
            error=reason,
            attempts=attempts,
            failed_at=datetime.now(UTC),
        )
        return []

    def _failed(
        self,
        event: Envelope[DocumentIngested],
        reason: str,
        attempt: int,
        *,
        permanent: bool = True,
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
