"""Plain-value builders shared by the enrichment unit tests."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from engram_enrichment.domain.model import Entity, RecordAssertion
from engram_events import Envelope, new_event
from engram_events.catalog import RECORD_TOMBSTONED, RECORD_UPSERTED
from engram_events.ids import Scalar
from engram_events.payloads.records import Lineage, RecordTombstoned, RecordUpserted

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SHA = "b" * 64


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def entity(entity_id: str = "carrier:c1") -> Entity:
    return Entity(tenant_id="tnt_a", entity_id=entity_id, entity_type="carrier")


def assertion(
    record_id: str, revision: int, minute: int = 0, document_id: str | None = None, **attrs: Scalar
) -> RecordAssertion:
    return RecordAssertion(
        record_id=record_id,
        record_type="carrier",
        revision=revision,
        attributes=dict(attrs),
        document_id=document_id or f"doc_{record_id}",
        locator="row:2",
        observed_at=at(minute),
    )


def upserted(
    record_id: str,
    revision: int,
    attributes: dict[str, Scalar],
    *,
    minute: int = 0,
    tenant: str = "tnt_a",
    entity_id: str = "carrier:c1",
    event_id: uuid.UUID | None = None,
    passage_ids: tuple[str, ...] = (),
) -> Envelope[Any]:
    payload = RecordUpserted(
        record_id=record_id,
        record_type="carrier",
        entity_id=entity_id,
        revision=revision,
        attributes=attributes,
        content_sha256=SHA,
        lineage=Lineage(
            document_id=f"doc_{record_id}",
            document_version="v1",
            locator="row:2",
            passage_ids=list(passage_ids),
        ),
        observed_at=at(minute),
    )
    return new_event(RECORD_UPSERTED, payload, tenant_id=tenant, event_id=event_id)


def tombstoned(
    record_id: str, *, prune_job_id: str | None = None, entity_id: str | None = "carrier:c1"
) -> Envelope[Any]:
    payload = RecordTombstoned(
        record_id=record_id,
        entity_id=entity_id,
        reason="prune",
        prune_job_id=prune_job_id,
        content_sha256=SHA,
        last_revision=1,
    )
    return new_event(RECORD_TOMBSTONED, payload, tenant_id="tnt_a")
