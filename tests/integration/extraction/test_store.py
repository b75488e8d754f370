"""Extraction's stores on the real database: markers, the keyset listing and prune selections."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram_events.payloads.prune import PruneSelector
from engram_extraction.adapters.mapping import record_head
from engram_extraction.adapters.store import RECORDS, RecordStore
from engram_extraction.adapters.tombstones import TombstoneStore
from engram_extraction.domain.tombstones import Marker

pytestmark = pytest.mark.integration
TENANT = "t_store"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def head(record_id: str, at: datetime) -> dict[str, Any]:
    return {
        "_id": f"{TENANT}:{record_id}",
        "tenant_id": TENANT,
        "record_id": record_id,
        "record_type": "item",
        "entity_id": f"item:{record_id}",
        "status": "active",
        "revision": 1,
        "attributes": [{"k": "name", "v": "secret"}],
        "content_sha256": "ab" * 32,
        "updated_at": at,
    }


async def test_a_head_gone_before_marking_is_written_as_a_whole_marker(mongo_db: Any) -> None:
    store = RecordStore(mongo_db, batch=10)
    kept, gone = head("r1", T0), head("r2", T0)
    await mongo_db[RECORDS].insert_many([kept, gone])
    await mongo_db[RECORDS].delete_one({"_id": gone["_id"]})
    marker = Marker(T0, "prune", "job_1")

    await store.replace_with_markers(TENANT, [record_head(kept), record_head(gone)], marker)

    docs = {d["record_id"]: d async for d in mongo_db[RECORDS].find({"tenant_id": TENANT})}
    assert set(docs) == {"r1", "r2"}
    for doc in docs.values():
        assert doc["status"] == "tombstoned" and doc["prune_job_id"] == "job_1"
        assert "attributes" not in doc, "a marker keeps ids and hashes, never content"
        assert doc["content_sha256"] == "ab" * 32


async def test_the_listing_pages_in_update_order_without_skipping_equal_times(
    mongo_db: Any,
) -> None:
    store = RecordStore(mongo_db, batch=10)
    later = T0 + timedelta(seconds=5)
    other = {**head("r0", T0), "_id": "t_other:r0", "tenant_id": "t_other"}
    await mongo_db[RECORDS].insert_many(
        [head("r4", later), head("r1", T0), head("r2", later), head("r3", T0), other]
    )

    pages: list[list[str]] = []
    after = None
    while True:
        page = await store.list_records(TENANT, filters={}, after=after, limit=2)
        if not page:
            break
        pages.append([h.record_id for h in page])
        last = page[-1]
        assert last.updated_at is not None
        after = (last.updated_at, last.record_id)

    assert pages == [["r1", "r3"], ["r2", "r4"]]
    typed = await store.list_records(TENANT, filters={"record_type": "item"}, after=None, limit=10)
    assert [h.record_id for h in typed] == ["r1", "r3", "r2", "r4"]


async def test_a_selection_by_age_finds_live_heads_and_a_job_finds_its_own_markers(
    mongo_db: Any,
) -> None:
    tombstones = TombstoneStore(RecordStore(mongo_db, batch=10))
    old, new = T0 - timedelta(days=40), T0
    marked = {**head("r3", old), "status": "tombstoned", "prune_job_id": "job_1"}
    other = {**head("r0", old), "_id": "t_other:r0", "tenant_id": "t_other"}
    await mongo_db[RECORDS].insert_many([head("r1", old), head("r2", new), marked, other])

    selected = await tombstones.selected_heads(TENANT, PruneSelector(older_than_days=30), T0)
    assert [h.record_id for h in selected] == ["r1"]
    markers = await tombstones.job_markers(TENANT, "job_1")
    assert [h.record_id for h in markers] == ["r3"]
    assert await tombstones.job_markers(TENANT, "job_2") == []
