"""Structured imports: rows become records the same way as a document's, without an extractor.

An import adds rows and retires none; its outcome (or its failure, once its attempts run out)
is kept for its status URL.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.records import RecordsImportRequested
from engram_extraction.domain.candidates import Candidate, Limits, check_values
from engram_extraction.domain.naming import short_hash
from engram_extraction.domain.records import Source, build
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.ports import Outbox, RecordWrites, TypeResolver, registry_for
from engram_extraction.service.attempts import FailureRecord
from engram_extraction.service.recording import RecordWriter

Events = list[Envelope[Any]]


class RecordImports:
    """Turns import requests into records; idempotent on deterministic ids."""

    def __init__(
        self,
        store: RecordWrites,
        registry: SchemaRegistry | TypeResolver,
        outbox: Outbox,
        *,
        limits: Limits | None = None,
        max_attempts: int = 5,
    ) -> None:
        self.store = store
        self.registry = registry
        self.limits = limits or Limits()
        self.writer = RecordWriter(store, outbox)
        self.failures = FailureRecord(store, outbox, max_attempts)

    async def import_rows(self, event: Envelope[RecordsImportRequested]) -> Events:
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
            registry = await registry_for(self.registry, event.tenant_id)
            built = build(candidates, source, registry)
            done, events = await self.writer.apply(
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

        return await self.failures.run(event, apply, self._exhausted)

    async def dead_lettered(
        self, event: Envelope[RecordsImportRequested], letter: DeadLetter
    ) -> Events:
        """An import the consumer dead-lettered fails visibly, with the letter's reason."""
        return await self._exhausted(event, letter.item_reason(), letter.attempts)

    async def _exhausted(self, event: Envelope[Any], reason: str, attempts: int) -> Events:
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
