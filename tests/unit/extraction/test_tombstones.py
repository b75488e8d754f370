"""A prune or a deleted document announces each selected record once, after its marker, a chunk
at a time, and again when replayed after the markers were written."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import DOCUMENT_TOMBSTONED, PRUNE_REQUESTED
from engram_events.payloads.documents import DocumentTombstoned
from engram_events.payloads.prune import PruneRequested, PruneSelector
from engram_extraction.domain.heads import RecordHead
from engram_extraction.domain.tombstones import Marker
from engram_extraction.service.tombstones import ANNOUNCE_CHUNK, Tombstoning
from tests.unit.extraction.fakes import FakeOutbox, FakeStore

pytestmark = pytest.mark.unit
SIZE = 2 * ANNOUNCE_CHUNK + 500


class Tombstones:
    """The TombstoneStore surface over the fake record store."""

    def __init__(self, records: FakeStore) -> None:
        self.records = records

    async def heads_by_id(self, tenant_id: str, record_ids: Sequence[str]) -> list[RecordHead]:
        return await self.records.heads_by_id(tenant_id, record_ids)

    async def selected_heads(
        self, tenant_id: str, selector: PruneSelector, now: datetime
    ) -> list[RecordHead]:
        raise AssertionError("a prune by record ids reads heads by id, never by a query")

    async def job_markers(self, tenant_id: str, prune_job_id: str) -> list[RecordHead]:
        raise AssertionError("a prune by record ids finds its own markers by id")

    async def document_record_ids(self, tenant_id: str, document_id: str) -> list[str]:
        raise AssertionError("a prune by record ids never reads a document's manifest")

    async def tombstone(self, tenant_id: str, heads: list[RecordHead], marker: Marker) -> None:
        await self.records.replace_with_markers(tenant_id, heads, marker)


class CheckingOutbox(FakeOutbox):
    """Fails the test if a record is announced before its marker is written."""

    def __init__(self, records: FakeStore) -> None:
        super().__init__()
        self.records = records

    async def stage_entries(self, docs: list[dict[str, Any]]) -> int:
        for doc in docs:
            key = doc["envelope"].payload.record_id if "envelope" in doc else doc["key"]
            assert self.records.heads[key]["status"] == "tombstoned", f"{key} announced early"
        return await super().stage_entries(docs)


def _store() -> FakeStore:
    store = FakeStore()
    for i in range(SIZE):
        store.heads[f"rec_{i}"] = {
            "_id": f"t1:rec_{i}",
            "record_id": f"rec_{i}",
            "tenant_id": "t1",
            "status": "active",
            "revision": 1,
            "content_sha256": "0" * 64,
            "attributes": [{"k": "name", "v": f"carrier {i}"}],
        }
    store.heads["rec_other_tenant"] = {**store.heads["rec_0"], "tenant_id": "t2"}
    return store


def _prune(job: str, record_ids: list[str]) -> Envelope[PruneRequested]:
    request = PruneRequested(prune_job_id=job, selector=PruneSelector(record_ids=record_ids))
    return new_event(PRUNE_REQUESTED, request, tenant_id="t1")


async def test_every_selected_record_is_announced_once_and_the_job_acknowledged_last() -> None:
    store = _store()
    outbox = CheckingOutbox(store)
    handlers = Tombstoning(Tombstones(store), outbox)
    wanted = [f"rec_{i}" for i in range(SIZE)]
    asked = [*wanted, "rec_0", "rec_unknown", "rec_other_tenant"]

    [ack] = await handlers.prune(_prune("prj_1", asked))

    announced = [e.payload.record_id for e in outbox.staged]
    assert announced == wanted, "each selected record once, in the order asked"
    assert sorted(doc["key"] for doc in outbox.raw.values() if "key" in doc) == sorted(wanted)
    assert ack.event_type == "tombstone.applied"
    assert ack.payload.tombstoned_ids == wanted and ack.payload.counts == {"records": SIZE}
    assert all(store.heads[r]["status"] == "tombstoned" for r in wanted)
    assert store.heads["rec_other_tenant"]["status"] == "active"
    assert "attributes" not in store.heads["rec_1"], "the marker keeps no content"

    staged = len(outbox.staged)
    [again] = await handlers.prune(_prune("prj_1", asked))
    assert len(outbox.staged) == staged, "a replay stages the same events, already there"
    assert again.payload.tombstoned_ids == wanted

    [other] = await handlers.prune(_prune("prj_2", wanted[:10]))
    assert other.payload.tombstoned_ids == [] and len(outbox.staged) == staged


class DocumentTombstones(Tombstones):
    """Every record of the store asserted by one document, `doc_1`."""

    async def document_record_ids(self, tenant_id: str, document_id: str) -> list[str]:
        heads = self.records.heads.values()
        return [h["record_id"] for h in heads if h["tenant_id"] == tenant_id]


class OutboxFailingOnce(FakeOutbox):
    """An outbox whose first staging fails, after the markers were written."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    async def stage_entries(self, docs: list[dict[str, Any]]) -> int:
        if not self.failed:
            self.failed = True
            raise ConnectionError("the process died before the outbox write")
        return await super().stage_entries(docs)


async def test_a_document_deleted_without_a_job_is_announced_again_when_replayed() -> None:
    store = _store()
    for head in store.heads.values():
        head["document_id"] = "doc_1"
    outbox = OutboxFailingOnce()
    handlers = Tombstoning(DocumentTombstones(store), outbox)
    gone = DocumentTombstoned(document_id="doc_1", reason="drive_removed")
    event = new_event(DOCUMENT_TOMBSTONED, gone, tenant_id="t1")
    with pytest.raises(ConnectionError):
        await handlers.document_gone(event)
    assert store.heads["rec_0"]["status"] == "tombstoned", "the first chunk's markers were written"
    assert await handlers.document_gone(event) == [], "no job to acknowledge"
    announced = [e.payload.record_id for e in outbox.staged]
    assert announced == [f"rec_{i}" for i in range(SIZE)]
    staged = len(outbox.staged)
    later = new_event(
        DOCUMENT_TOMBSTONED, gone.model_copy(update={"reason": "drive_trashed"}), tenant_id="t1"
    )
    await handlers.document_gone(later)
    assert len(outbox.staged) == staged, "another deletion of the same document announces nothing"
