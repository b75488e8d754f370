"""Keeping a document version's passages: written, then announced one `passage.upserted` each.

Rows and event ids derive from the passage id (document, version, span), so a replay writes the
same rows and stages the same events, which consumers skip.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import PASSAGE_UPSERTED
from engram_events.payloads.documents import DocumentIngested
from engram_events.payloads.passages import PassageUpserted
from engram_extraction.domain.passages import Passage, passage_id
from engram_extraction.ports import PassageWrites

log = logging.getLogger(__name__)
Events = list[Envelope[Any]]


class PassageWriter:
    """Writes a version's passages and returns the events that announce them."""

    def __init__(self, store: PassageWrites) -> None:
        self.store = store

    async def apply(self, event: Envelope[DocumentIngested], passages: list[Passage]) -> Events:
        """Rows first (then the document's head names this version), events after."""
        if not passages:
            return []
        doc = event.payload
        payloads = [announced(event.tenant_id, doc, passage) for passage in passages]
        rows = [payload.model_dump() for payload in payloads]
        await self.store.write_passages(
            event.tenant_id, doc.document_id, doc.version, rows, datetime.now(UTC)
        )
        log.info(
            "passages written",
            extra={
                "document_id": doc.document_id,
                "version": doc.version,
                "passage_count": len(rows),
            },
        )
        return [
            new_event(
                PASSAGE_UPSERTED,
                payload,
                tenant_id=event.tenant_id,
                caused_by=event,
                event_id=derive_event_id(payload.passage_id, "upserted"),
            )
            for payload in payloads
        ]


def announced(tenant_id: str, doc: DocumentIngested, passage: Passage) -> PassageUpserted:
    """A passage as the contract carries it."""
    return PassageUpserted(
        passage_id=passage_id(tenant_id, doc.document_id, doc.version, passage.start, passage.end),
        document_id=doc.document_id,
        version=doc.version,
        name=doc.name,
        ordinal=passage.ordinal,
        heading_path=list(passage.heading_path),
        start=passage.start,
        end=passage.end,
        page=passage.page,
        page_end=passage.page_end,
        text=passage.text,
        text_sha256=hashlib.sha256(passage.text.encode()).hexdigest(),
    )
