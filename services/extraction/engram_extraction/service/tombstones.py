"""Extraction's part of a prune: tombstone the selected records and say so.

The owner of records selects them with one predicate (so what is counted is what is
deleted), replaces each head with a marker that keeps its last revision and hashes, and only
then stages a `record.tombstoned` per record and a null-valued Kafka tombstone on the
compacted records topic (a chunk at a time), and returns the job's `tombstone.applied`. The
module-level helpers are shared with extraction itself, which retires records a newer document
version no longer asserts (`absent_from_version`) the same way.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope, Topics, derive_event_id, new_event
from engram_events.acks import tombstone_applied
from engram_events.catalog import RECORD_TOMBSTONED
from engram_events.payloads.documents import DocumentTombstoned
from engram_events.payloads.prune import PruneRequested, PruneSelector
from engram_events.payloads.records import RecordTombstoned
from engram_extraction.domain.heads import RecordHead
from engram_extraction.domain.selection import selection
from engram_extraction.domain.tombstones import Reason, deletion_reason, left_by, marker
from engram_extraction.ports import Outbox, TombstoneWrites

log = logging.getLogger(__name__)
SERVICE = "extraction"
ANNOUNCE_CHUNK = 1000
"""Records read, tombstoned and announced at a time; the job's acknowledgement comes last."""


class Tombstoning:
    """Tombstones what a prune job selects, or what a deleted document asserted."""

    def __init__(self, store: TombstoneWrites, outbox: Outbox) -> None:
        self.store = store
        self.outbox = outbox

    async def prune(self, event: Envelope[PruneRequested]) -> list[Envelope[Any]]:
        """Tombstone the job's selection."""
        request = event.payload
        return await self._tombstone(
            event, request.selector, "prune", request.prune_job_id, source_ids=[]
        )

    async def document_gone(self, event: Envelope[DocumentTombstoned]) -> list[Envelope[Any]]:
        """A deleted document takes every record it asserted with it."""
        doc = event.payload
        reason = deletion_reason(doc.reason)
        selector = PruneSelector(document_id=doc.document_id)
        return await self._tombstone(
            event, selector, reason, doc.prune_job_id, source_ids=[doc.document_id]
        )

    async def _selected(
        self,
        tenant_id: str,
        selector: PruneSelector,
        now: datetime,
        prune_job_id: str | None,
        cause: str,
    ) -> AsyncIterator[list[RecordHead]]:
        """The selected heads, a chunk at a time; candidates from ids or a query, then the one
        predicate. Ids are read a chunk at a time too, so the first records are announced
        (and enrichment and memory start) while the rest are still being read.

        Heads this same job (or this same event) already tombstoned are selected again: a replay
        after a crash between the markers' write and the outbox must announce them again (same
        event ids).
        """
        selects = selection(tenant_id, selector, now)
        ids: list[str] | None = None
        if selector.record_ids:
            ids = list(dict.fromkeys(selector.record_ids))
        elif selector.document_id is not None and selector.older_than_days is None:
            ids = list(
                dict.fromkeys(await self.store.document_record_ids(tenant_id, selector.document_id))
            )
        if ids is not None:
            for start in range(0, len(ids), ANNOUNCE_CHUNK):
                heads = await self.store.heads_by_id(tenant_id, ids[start : start + ANNOUNCE_CHUNK])
                yield [h for h in heads if selects(h) or left_by(h, prune_job_id, cause)]
            return
        candidates = await self.store.selected_heads(tenant_id, selector, now)
        if prune_job_id is not None:
            candidates += await self.store.job_markers(tenant_id, prune_job_id)
        unique = {head.record_id: head for head in candidates}.values()
        chosen = [h for h in unique if selects(h) or left_by(h, prune_job_id, cause)]
        for start in range(0, len(chosen), ANNOUNCE_CHUNK):
            yield chosen[start : start + ANNOUNCE_CHUNK]

    async def _tombstone(
        self,
        event: Envelope[Any],
        selector: PruneSelector,
        reason: Reason,
        prune_job_id: str | None,
        *,
        source_ids: list[str],
    ) -> list[Envelope[Any]]:
        """Per chunk of the selection: markers written, then its `record.tombstoned` events and
        Kafka tombstones staged; the job's acknowledgement, naming every record, is returned."""
        now = (
            event.occurred_at if event.occurred_at.tzinfo else event.occurred_at.replace(tzinfo=UTC)
        )
        cause = str(event.event_id)
        mark = marker(reason, prune_job_id, cause)
        record_ids: list[str] = []
        newly = 0
        async for heads in self._selected(event.tenant_id, selector, now, prune_job_id, cause):
            live = [head for head in heads if not head.tombstoned]
            await self.store.tombstone(event.tenant_id, live, mark)
            announced = [record_tombstoned(event, head, reason, prune_job_id) for head in heads]
            await self.outbox.stage_entries(
                kafka_tombstones(self.outbox, heads) + self.outbox.entries(announced)
            )
            record_ids += [head.record_id for head in heads]
            newly += len(live)
        log.info(
            "records tombstoned",
            extra={
                "count": len(record_ids),
                "newly": newly,
                "prune_job_id": prune_job_id,
                "reason": reason,
            },
        )
        if prune_job_id is None:
            return []
        return [
            tombstone_applied(
                event,
                prune_job_id=prune_job_id,
                service=SERVICE,
                counts={"records": len(record_ids)},
                tombstoned_ids=record_ids,
                source_ids=source_ids,
            )
        ]


def kafka_tombstones(outbox: Outbox, heads: list[RecordHead]) -> list[dict[str, Any]]:
    """A null-valued entry per record for the compacted topic, with a per-revision id."""
    return [
        outbox.tombstone_entry(
            Topics.RECORDS,
            head.record_id,
            str(derive_event_id(head.record_id, f"kafka-tombstone:{head.revision}")),
        )
        for head in heads
    ]


def record_tombstoned(
    event: Envelope[Any], head: RecordHead, reason: Reason, prune_job_id: str | None
) -> Envelope[Any]:
    """The typed tombstone: ids and the hash of what was removed, never the content."""
    revision = head.revision
    payload = RecordTombstoned(
        record_id=head.record_id,
        entity_id=head.entity_id,
        reason=reason,
        prune_job_id=prune_job_id,
        content_sha256=head.content_sha256,
        last_revision=revision,
        document_id=head.document_id,
    )
    return new_event(
        RECORD_TOMBSTONED,
        payload,
        tenant_id=event.tenant_id,
        caused_by=event,
        event_id=derive_event_id(head.record_id, f"tombstoned:{revision}"),
    )
