"""The extraction handlers over hand-written fakes: events, replays and the failure record."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import DOCUMENT_TOMBSTONED
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.documents import DocumentTombstoned
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.service.documents import DocumentExtraction
from engram_extraction.service.passages import PassageWriter
from engram_platform.retry import PermanentError
from tests.unit.extraction.fakes import CANARY, FakeOutbox, FakePassages, FakeStore, ingested

pytestmark = pytest.mark.unit


def extraction(store: FakeStore, outbox: FakeOutbox, attempts: int = 3) -> DocumentExtraction:
    return DocumentExtraction(
        store, SchemaRegistry(), outbox, passages=FakePassages(), max_attempts=attempts
    )


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


RETURNS = (
    b"# Returns policy\n\nYou may return most items within 30 days of delivery.\n\n"
    b"Opened electronics can be returned within 14 days of delivery.\n\n"
    b"## Damaged goods\n\nIf an item arrives damaged, contact us within 48 hours.\n"
)


async def test_a_prose_document_without_records_is_extracted_into_announced_passages() -> None:
    store, outbox, passages = FakeStore(), FakeOutbox(), FakePassages()
    documents = DocumentExtraction(store, SchemaRegistry(), outbox, passages=passages)
    event = ingested(RETURNS, name="prose.md", mime="text/markdown")
    first = await documents.extract(event)
    assert [e.event_type for e in first] == [
        "passage.upserted",
        "passage.upserted",
        "document.extracted",
    ]
    summary = first[-1].payload
    assert (summary.record_count, summary.passage_count) == (0, 2)
    announced = [e.payload for e in first[:2]]
    assert [p.heading_path for p in announced] == [
        ["Returns policy"],
        ["Returns policy", "Damaged goods"],
    ]
    text = RETURNS.decode()
    for passage in announced:
        assert text[passage.start : passage.end] == passage.text
        assert passages.rows[f"tnt_a:{passage.passage_id}"]["text"] == passage.text
    assert "within 14 days" in announced[0].text
    assert passages.heads == {"tnt_a:doc_1": event.payload.version}

    replay = await documents.extract(event)
    assert [e.event_id for e in replay] == [e.event_id for e in first]
    assert len(passages.rows) == 2


async def test_a_markdown_document_of_headings_only_still_fails_with_its_reason() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    event = ingested(b"# Title\n\n## Part\n", name="empty.md", mime="text/markdown")
    (failed,) = await extraction(store, outbox).extract(event)
    assert failed.event_type == "document.extraction_failed"
    assert failed.payload.error == "no records found by the markdown extractor"


def gone(prune_job_id: str | None = "job_1") -> Envelope[Any]:
    payload = DocumentTombstoned(
        document_id="doc_1", reason="user_deleted", prune_job_id=prune_job_id
    )
    return new_event(DOCUMENT_TOMBSTONED, payload, tenant_id="tnt_a")


async def test_a_new_version_withdraws_the_passages_of_the_one_before() -> None:
    store, outbox, passages = FakeStore(), FakeOutbox(), FakePassages()
    documents = DocumentExtraction(store, SchemaRegistry(), outbox, passages=passages)
    first = await documents.extract(ingested(RETURNS, name="prose.md", mime="text/markdown"))
    old = sorted(e.payload.passage_id for e in first if e.event_type == "passage.upserted")
    revised = RETURNS.replace(b"14 days", b"21 days")
    event = ingested(revised, name="prose.md", mime="text/markdown")
    second = await documents.extract(event)
    (withdrawn,) = [e.payload for e in second if e.event_type == "passages.withdrawn"]
    assert withdrawn.reason == "new_version" and withdrawn.version == event.payload.version
    assert withdrawn.passage_ids == old
    new = sorted(e.payload.passage_id for e in second if e.event_type == "passage.upserted")
    assert passages.live() == new and not set(new) & set(old)
    assert all("text" not in passages.rows[f"tnt_a:{pid}"] for pid in old), "markers keep no text"

    replay = await documents.extract(event)
    assert [e.event_id for e in replay] == [e.event_id for e in second]


async def test_a_deleted_document_withdraws_every_passage_and_tells_its_prune_job() -> None:
    store, outbox, passages = FakeStore(), FakeOutbox(), FakePassages()
    documents = DocumentExtraction(store, SchemaRegistry(), outbox, passages=passages)
    await documents.extract(ingested(RETURNS, name="prose.md", mime="text/markdown"))
    writer = PassageWriter(passages)
    cause = gone()
    (withdrawn,) = await writer.document_gone(cause)
    assert withdrawn.event_type == "passages.withdrawn"
    assert withdrawn.payload.reason == "document_deleted"
    assert withdrawn.payload.prune_job_id == "job_1" and len(withdrawn.payload.passage_ids) == 2
    assert passages.live() == [] and passages.heads == {}
    again = await writer.document_gone(cause)
    assert [e.event_id for e in again] == [withdrawn.event_id], "a replay announces them again"


async def test_a_prune_job_hears_of_a_document_that_had_no_passages() -> None:
    (withdrawn,) = await PassageWriter(FakePassages()).document_gone(gone())
    assert withdrawn.payload.passage_ids == [] and withdrawn.payload.prune_job_id == "job_1"
    assert await PassageWriter(FakePassages()).document_gone(gone(None)) == []


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
