"""A curator's edit becomes a `human` record: one per entity, attribute and key, revised by the
key's next edit, carrying the key, time and reason in its lineage."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import FACT_EDIT_REQUESTED
from engram_events.ids import Scalar
from engram_events.payloads.records import FactEditRequested, HumanEdit
from engram_extraction.domain.human import type_of
from engram_extraction.service.edits import HumanEdits
from tests.unit.extraction.fakes import FakeOutbox, FakeStore

pytestmark = pytest.mark.unit
KEY = "0123456789abcdef"


def edit(
    action: Literal["assert", "withdraw"], value: Scalar, key: str = KEY, minute: int = 0
) -> Envelope[Any]:
    payload = FactEditRequested(
        entity_id="carrier:c1",
        attribute="phone",
        value=value,
        edit=HumanEdit(
            key_id=key,
            action=action,
            reason="called them",
            at=datetime(2026, 12, 5, 14, minute, tzinfo=UTC),
        ),
    )
    return new_event(FACT_EDIT_REQUESTED, payload, tenant_id="tnt_a")


def upserts(events: list[Envelope[Any]]) -> list[Any]:
    return [e.payload for e in events if e.event_type == "record.upserted"]


async def test_an_edit_is_a_human_record_with_the_key_time_and_reason() -> None:
    store = FakeStore()
    (record,) = upserts(await HumanEdits(store, FakeOutbox()).apply(edit("assert", "+47 1")))
    assert (record.entity_id, record.record_type, record.revision) == ("carrier:c1", "carrier", 1)
    assert record.attributes == {"phone": "+47 1"}
    assert record.lineage.document_id is None
    assert record.lineage.edit is not None and record.lineage.edit.key_id == KEY
    assert record.lineage.edit.reason == "called them"


async def test_the_keys_next_edit_revises_the_same_record_and_another_key_has_its_own() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    edits = HumanEdits(store, outbox)
    (first,) = upserts(await edits.apply(edit("assert", "+47 1")))
    (second,) = upserts(await edits.apply(edit("withdraw", "+47 1", minute=1)))
    (other,) = upserts(await edits.apply(edit("assert", "+47 1", key="f" * 16)))
    assert second.record_id == first.record_id and second.revision == 2
    assert second.lineage.edit is not None and second.lineage.edit.action == "withdraw"
    assert other.record_id != first.record_id and other.revision == 1


async def test_a_replayed_edit_announces_the_same_ids() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    event = edit("assert", 42)
    first = await HumanEdits(store, outbox).apply(event)
    again = await HumanEdits(store, outbox).apply(event)
    assert [e.event_id for e in again] == [e.event_id for e in first]


def test_the_record_type_is_the_entity_ids_prefix() -> None:
    assert type_of("carrier:c1") == "carrier"
    assert type_of("plain") == "record"
