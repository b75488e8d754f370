"""What a tenant is shown of its dead letters: ids, why and which item, never the message."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime

import pytest

from engram_events import encode, new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.memories import MemoryWriteRequested
from engram_gateway.domain.dead_letters import named_item, tenant_view

pytestmark = pytest.mark.unit
SECRET = "the words the tenant wrote"


def letter(value: bytes, reason: str | None = "BulkWriteError: write error codes 2") -> DeadLetter:
    return DeadLetter(
        consumer="memory",
        topic="engram.memories.v1",
        partition=0,
        offset=9,
        key="agt_1",
        event_id="e1",
        event_type="memory.write_requested",
        tenant_id="ten_1",
        error_type="BulkWriteError",
        error=f"batch op errors occurred: {SECRET}",
        reason=reason,
        attempts=1,
        value_base64=base64.b64encode(value).decode(),
        headers={"traceparent": "00-x"},
        failed_at=datetime(2026, 12, 5, tzinfo=UTC),
    )


def poisoned_write() -> bytes:
    payload = MemoryWriteRequested(
        memory_id="mem_7", agent_id="agt_1", content=SECRET, metadata={"secret": SECRET}
    )
    return encode(new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id="ten_1"))


def test_the_view_names_the_item_and_the_reason_but_never_the_content() -> None:
    shown = tenant_view("0-9", letter(poisoned_write()), replayed=False)
    assert shown["item"] == {"type": "memory", "id": "mem_7"}
    assert shown["reason"] == "BulkWriteError: write error codes 2"
    assert (shown["letter_id"], shown["attempts"], shown["replayed"]) == ("0-9", 1, False)
    assert SECRET not in json.dumps(shown)


def test_a_letter_from_before_reasons_shows_its_error_type() -> None:
    assert tenant_view("0-9", letter(poisoned_write(), None), True)["reason"] == "BulkWriteError"


@pytest.mark.parametrize("value", [b"", b"not json", b"[1, 2]", b'{"payload": "x"}'])
def test_a_message_that_names_no_item_shows_none(value: bytes) -> None:
    assert named_item(letter(value)) is None
