"""Restoring an import's records as they were exported: written and announced through the same
writer as any source's, so enrichment builds the same entities, facts and articles."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope
from engram_events.payloads.records import RecordsRestoreRequested
from engram_extraction.domain.naming import short_hash
from engram_extraction.domain.records import Built
from engram_extraction.domain.restoring import restored
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.ports import Outbox, RecordWrites, TypeResolver, registry_for
from engram_extraction.service.recording import RecordWriter

Events = list[Envelope[Any]]


class RecordRestores:
    """Writes restored records; a replay or a second import revises nothing."""

    def __init__(
        self, store: RecordWrites, types: SchemaRegistry | TypeResolver, outbox: Outbox
    ) -> None:
        self.writer = RecordWriter(store, outbox)
        self.types = types

    async def restore(self, event: Envelope[RecordsRestoreRequested]) -> Events:
        """One batch of a source item's records, added without retiring the item's others."""
        registry = await registry_for(self.types, event.tenant_id)
        source, drafts = restored(event.tenant_id, event.payload, registry)
        cause = short_hash(f"restore:{event.payload.restore_id}")
        _, events = await self.writer.apply(
            event, source, cause, Built(drafts=drafts), complete=False
        )
        return events
