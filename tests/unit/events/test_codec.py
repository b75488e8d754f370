"""The contract round-trips, and every bad message raises a typed error consumers dead-letter."""

import json
from datetime import UTC, datetime

import pytest

from engram_events import (
    EVENT_TYPES,
    MalformedEvent,
    PoisonMessage,
    UnknownEventType,
    UnsupportedSchemaVersion,
    decode,
    derive_event_id,
    encode,
    new_event,
)
from engram_events.catalog import DOCUMENT_SUBMITTED, RECORD_UPSERTED
from engram_events.payloads.documents import DocumentSubmitted
from engram_events.payloads.records import Lineage, RecordUpserted

pytestmark = pytest.mark.unit

SHA = "a" * 64


def _record() -> RecordUpserted:
    return RecordUpserted(
        record_id="rec_1",
        record_type="carrier",
        entity_id="carrier:c1",
        revision=2,
        attributes={"name": "Acme", "fleet": 12, "active": True, "note": None},
        content_sha256=SHA,
        lineage=Lineage(document_id="doc_1", document_version="v1", locator="row:3"),
        observed_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_round_trip_keeps_type_and_values() -> None:
    event = new_event(RECORD_UPSERTED, _record(), tenant_id="tnt_1")
    decoded = decode(encode(event))
    assert decoded == event
    assert isinstance(decoded.payload, RecordUpserted)
    assert decoded.payload.attributes["fleet"] == 12
    assert type(decoded) is type(event)


def test_caused_events_inherit_correlation_and_name_their_cause() -> None:
    cause = new_event(RECORD_UPSERTED, _record(), tenant_id="tnt_1")
    effect = new_event(
        RECORD_UPSERTED,
        _record(),
        tenant_id="tnt_1",
        caused_by=cause,
        event_id=derive_event_id(cause.event_id, "x"),
    )
    assert effect.causation_id == cause.event_id
    assert effect.correlation_id == cause.correlation_id
    assert effect.event_id == derive_event_id(cause.event_id, "x")
    assert derive_event_id(cause.event_id, "x") != derive_event_id(cause.event_id, "y")


def test_every_event_type_has_a_topic_and_a_key() -> None:
    assert len(EVENT_TYPES) >= 17
    for event_type in EVENT_TYPES.values():
        assert event_type.topic.startswith("engram.") and event_type.topic.endswith(".v1")


def test_record_key_is_the_record_id() -> None:
    assert RECORD_UPSERTED.key(_record()) == "rec_1"


def _raw(**changes: object) -> bytes:
    data = json.loads(encode(new_event(RECORD_UPSERTED, _record(), tenant_id="tnt_1")))
    data.update(changes)
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b"", MalformedEvent),
        (b"{not json", MalformedEvent),
        (b"\xff\xfe", MalformedEvent),
        (b"[]", MalformedEvent),
        (_raw(event_type="record.exploded"), UnknownEventType),
        (_raw(schema_version=2), UnsupportedSchemaVersion),
        (_raw(payload={"record_id": "rec_1"}), MalformedEvent),
        (_raw(tenant_id={"$ne": None}), MalformedEvent),
    ],
)
def test_bad_messages_raise_typed_poison_errors(raw: bytes, error: type[PoisonMessage]) -> None:
    with pytest.raises(error):
        decode(raw)


def test_validation_errors_do_not_echo_content() -> None:
    data = json.loads(_raw())
    data["payload"]["attributes"] = {"secret": {"nested": "CANARY-text with spaces"}}
    with pytest.raises(MalformedEvent) as info:
        decode(json.dumps(data).encode())
    assert "CANARY" not in str(info.value)


def test_unknown_optional_fields_are_ignored_within_a_version() -> None:
    data = json.loads(_raw())
    data["payload"]["added_later"] = "x"
    data["added_to_envelope"] = 1
    assert decode(json.dumps(data).encode()).payload.record_id == "rec_1"


def test_ids_reject_dicts_and_whitespace() -> None:
    with pytest.raises(ValueError):
        DocumentSubmitted(
            document_id="doc 1",
            version="v",
            source="gateway",
            source_item_id="x",
            name="a.csv",
            mime="text/csv",
            content_sha256=SHA,
            size_bytes=1,
            content_base64="YQ==",
        )


def test_payload_must_match_its_event_type() -> None:
    with pytest.raises(TypeError):
        new_event(DOCUMENT_SUBMITTED, _record(), tenant_id="tnt_1")  # type: ignore[misc]
