"""Keeping a document version's passages: written, then announced one `passage.upserted` each;
the passages of the versions before it, or all of a deleted document's, withdrawn.

Rows and event ids derive from the passage id (document, version, span), so a replay writes the
same rows and stages the same events, which consumers skip. Withdrawn rows stay as markers
naming the cause, so a replay of that cause selects and announces them again (same event ids).
"""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import PASSAGE_UPSERTED, PASSAGES_WITHDRAWN
from engram_events.payloads.documents import DocumentIngested, DocumentTombstoned
from engram_events.payloads.passages import MAX_WITHDRAWN, PassagesWithdrawn, PassageUpserted
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
        upserted = [
            new_event(
                PASSAGE_UPSERTED,
                payload,
                tenant_id=event.tenant_id,
                caused_by=event,
                event_id=derive_event_id(payload.passage_id, "upserted"),
            )
            for payload in payloads
        ]
        return upserted + await self._withdraw(event, doc.document_id, keep=doc.version)

    async def document_gone(self, event: Envelope[DocumentTombstoned]) -> Events:
        """Every passage of a deleted document withdrawn; a prune job hears of it even when
        there were none (enrichment acknowledges the document)."""
        doc = event.payload
        events = await self._withdraw(event, doc.document_id, prune_job_id=doc.prune_job_id)
        await self.store.drop_head(event.tenant_id, doc.document_id)
        return events

    async def _withdraw(
        self,
        event: Envelope[Any],
        document_id: str,
        *,
        keep: str | None = None,
        prune_job_id: str | None = None,
    ) -> Events:
        """Markers for the document's live passages of other versions than `keep` (all of them
        without one), then their `passages.withdrawn` in chunks."""
        cause = str(event.event_id)
        rows = await self.store.document_passages(event.tenant_id, document_id)
        chosen = sorted(
            str(row["passage_id"])
            for row in rows
            if row.get("version") != keep
            and (row.get("status") != "withdrawn" or row.get("withdrawn_by") == cause)
        )
        if not chosen and (keep is not None or prune_job_id is None):
            return []
        await self.store.withdraw_passages(event.tenant_id, chosen, cause, datetime.now(UTC))
        chunks = [chosen[i : i + MAX_WITHDRAWN] for i in range(0, len(chosen), MAX_WITHDRAWN)]
        log.info(
            "passages withdrawn",
            extra={"document_id": document_id, "count": len(chosen), "prune_job_id": prune_job_id},
        )
        return [
            new_event(
                PASSAGES_WITHDRAWN,
                PassagesWithdrawn(
                    document_id=document_id,
                    passage_ids=chunk,
                    reason="new_version" if keep is not None else "document_deleted",
                    version=keep,
                    prune_job_id=prune_job_id,
                ),
                tenant_id=event.tenant_id,
                caused_by=event,
                event_id=derive_event_id(event.event_id, f"passages.withdrawn:{n}"),
            )
            for n, chunk in enumerate(chunks or [[]])
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
