"""Writing a source version's records: plan revisions, write, retire the absent, announce.

Records are written (history, heads, then the source's manifest) before any event is
returned, so `record.upserted` and the compacted `record.state` only announce durable
records. A document version is everything its source item now asserts: records an earlier
version produced and this one does not are tombstoned (`absent_from_version`) through the same
path as a prune, before the manifest that remembers it is saved. Imports add rows and retire none.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import RECORD_STATE, RECORD_UPSERTED
from engram_events.payloads.records import Lineage, RecordUpserted, TypeDefinition
from engram_extraction.domain.records import Built, Draft, Source
from engram_extraction.domain.revisions import Change, Plan, plan
from engram_extraction.domain.tombstones import marker
from engram_extraction.ports import Outbox, RecordWrites
from engram_extraction.service.tombstones import kafka_tombstones, record_tombstoned

log = logging.getLogger(__name__)
Events = list[Envelope[Any]]


class RecordWriter:
    """Applies built drafts to the store and returns the events that announce them."""

    def __init__(self, store: RecordWrites, outbox: Outbox) -> None:
        self.store = store
        self.outbox = outbox

    async def apply(
        self,
        event: Envelope[Any],
        source: Source,
        cause: str,
        built: Built,
        *,
        complete: bool | None = None,
    ) -> tuple[Plan, Events]:
        """Plan revisions, write history and heads, retire absent records, save the manifest.

        A document version is complete, so records it no longer asserts are retired; the
        manifest is saved last, so a crash before it replays the same plan. `complete=False`
        adds a document's records in parts (a restore) without retiring the others.
        """
        now = datetime.now(UTC)
        manifest = await self.store.manifest(event.tenant_id, source.source_item)
        whole = source.document_id is not None if complete is None else complete
        done = plan(built.drafts, manifest, cause, complete=whole)
        await self.store.write(event.tenant_id, source, done.created, done.revised, now)
        await self.store.keep_rejected(event.tenant_id, source, cause, built.rejected, now)
        retired = await self._retire(event, done.absent)
        if done.changed:
            await self.store.save_manifest(event.tenant_id, source.source_item, done.manifest, now)
        events: Events = []
        for change in done.announced:
            events.extend(record_events(event, source, change, now))
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
        live = [head for head in heads if not head.tombstoned]
        await self.store.replace_with_markers(
            event.tenant_id, live, marker("absent_from_version", None)
        )
        await self.outbox.stage_entries(kafka_tombstones(self.outbox, heads))
        log.info(
            "records absent from the new version tombstoned",
            extra={"count": len(heads), "newly": len(live), "reason": "absent_from_version"},
        )
        return [record_tombstoned(event, head, "absent_from_version", None) for head in heads]


def record_events(event: Envelope[Any], source: Source, change: Change, at: datetime) -> Events:
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
            passage_ids=list(draft.passage_ids),
            edit=source.edit,
        ),
        observed_at=at,
        type_definition=type_definition(draft),
        references=list(draft.references),
        valid_from=draft.valid_from,
        valid_to=draft.valid_to,
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


def type_definition(draft: Draft) -> TypeDefinition | None:
    """What enrichment learns of the record's type: whose definition, which version, and which
    attributes hold one value."""
    declared = draft.declared
    if declared is None:
        return None
    single = declared.schema.single_valued
    return TypeDefinition(
        origin=declared.origin,
        version=declared.version,
        single_valued=list(single) if single is not None else None,
    )
