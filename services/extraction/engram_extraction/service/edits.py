"""Curators' edits: each becomes a `human` record through the same writer as any source's, so
enrichment weighs it like any record and a prune takes it like any record."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope
from engram_events.payloads.records import FactEditRequested
from engram_extraction.domain.human import human_record
from engram_extraction.domain.naming import short_hash
from engram_extraction.domain.records import Built
from engram_extraction.ports import Outbox, RecordWrites
from engram_extraction.service.recording import RecordWriter

Events = list[Envelope[Any]]


class HumanEdits:
    """Writes a curator's edit as a record and announces it."""

    def __init__(self, store: RecordWrites, outbox: Outbox) -> None:
        self.writer = RecordWriter(store, outbox)

    async def apply(self, event: Envelope[FactEditRequested]) -> Events:
        """The edit's record, revised (or replayed under the same ids) and announced."""
        source, draft = human_record(event.tenant_id, event.payload)
        cause = short_hash(f"edit:{event.event_id}")
        _, events = await self.writer.apply(event, source, cause, Built(drafts=[draft]))
        return events
