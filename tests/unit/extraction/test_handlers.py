"""The extraction handlers over hand-written fakes: events, replays and the failure record."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram_events.payloads.dlq import DeadLetter
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.service.documents import DocumentExtraction
from engram_platform.retry import PermanentError
from tests.unit.extraction.fakes import CANARY, FakeOutbox, FakeStore, ingested

pytestmark = pytest.mark.unit


def extraction(store: FakeStore, outbox: FakeOutbox, attempts: int = 3) -> DocumentExtraction:
    return DocumentExtraction(store, SchemaRegistry(), outbox, max_attempts=attempts)


async def test_records_are_announced_after_the_write_and_replays_stage_the_same_ids() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    event = ingested(b"id,name\nc1,Acme\nc2,Beta\nc2,Dup\n")
    first = await extraction(store, outbox).extract(event)
    types = [e.event_type for e in first]
    assert types.count("record.upserted") == 2 and types.count("record.state") == 2
    assert types[-1] == "document.extracted"
    summary = first[-1].payload
    assert (summary.record_count, summary.rejected_count) == (2, 1)
    assert len(store.heads) == 2

    replay = await extraction(store, outbox).extract(event)
    assert [e.event_id for e in replay] == [e.event_id for e in first]


async def test_a_new_version_announces_only_what_changed() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    await extraction(store, outbox).extract(ingested(b"id,name\nc1,Acme\nc2,Beta\n"))
    second = await extraction(store, outbox).extract(ingested(b"id,name\nc1,Acme\nc2,Beta Co\n"))
    upserts = [e.payload for e in second if e.event_type == "record.upserted"]
    assert [(u.entity_id, u.revision) for u in upserts] == [("carrier:c2", 2)]
    assert second[-1].payload.unchanged_count == 1


async def test_unreadable_content_fails_at_once_with_its_reason() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    (failed,) = await extraction(store, outbox).extract(ingested(b"id,name\nc1,\xff\n"))
    assert failed.event_type == "document.extraction_failed"
    assert failed.payload.error == "the document is not valid UTF-8 (invalid byte at 11)"
    assert failed.payload.permanent and store.heads == {}


async def test_transient_failures_are_retried_then_recorded_as_failed_and_dead_lettered() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    store.fail_writes = True
    event = ingested(b"id,name\nc1,Acme\n")
    for _ in range(2):
        with pytest.raises(ConnectionError):
            await extraction(store, outbox, attempts=3).extract(event)
        assert outbox.staged == []
    with pytest.raises(PermanentError) as raised:
        await extraction(store, outbox, attempts=3).extract(event)
    (failed,) = outbox.staged
    assert failed.event_type == "document.extraction_failed"
    assert failed.payload.error == "extraction failed after 3 attempts (ConnectionError)"
    assert failed.payload.attempt == 3 and not failed.payload.permanent
    assert CANARY not in str(raised.value) and CANARY not in failed.payload.error


async def test_a_later_success_still_succeeds_after_failed_attempts() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    store.fail_writes = True
    event = ingested(b"id,name\nc1,Acme\n")
    with pytest.raises(ConnectionError):
        await extraction(store, outbox).extract(event)
    store.fail_writes = False
    done = await extraction(store, outbox).extract(event)
    assert done[-1].event_type == "document.extracted"
    assert done[-1].payload.attempts == 2


async def test_a_refused_write_goes_to_the_dead_letter_at_once_and_then_fails_visibly() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    store.refuse = OverflowError("MongoDB can only handle up to 8-byte ints")
    event = ingested(b"id,name\nc1,Acme\n")
    with pytest.raises(OverflowError):
        await extraction(store, outbox, attempts=3).extract(event)
    assert store.attempts == {} and outbox.staged == [], "no attempts spent on a lost cause"
    letter = DeadLetter(
        consumer="extraction",
        topic="engram.documents.v1",
        partition=0,
        offset=1,
        error_type="OverflowError",
        error="MongoDB can only handle up to 8-byte ints",
        reason="OverflowError",
        attempts=1,
        value_base64="",
        failed_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    (failed,) = await extraction(store, outbox).dead_lettered(event, letter)
    assert failed.event_type == "document.extraction_failed"
    assert failed.payload.error == "dead_lettered: OverflowError" and failed.payload.permanent
