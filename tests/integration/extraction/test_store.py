"""Extraction's record store on the real database: markers and the listing index."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram_extraction.adapters.store import ORDER, RECORDS, RecordStore, order_id

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
    marker = {"tombstoned_at": T0, "reason": "pruned", "prune_job_id": "job_1"}

    await store.replace_with_markers(TENANT, [kept, gone], marker)

    docs = {d["record_id"]: d async for d in mongo_db[RECORDS].find({"tenant_id": TENANT})}
    assert set(docs) == {"r1", "r2"}
    for doc in docs.values():
        assert doc["status"] == "tombstoned" and doc["prune_job_id"] == "job_1"
        assert "attributes" not in doc, "a marker keeps ids and hashes, never content"
        assert doc["content_sha256"] == "ab" * 32


async def test_the_listing_skips_and_drops_stale_entries_and_keeps_writes_in_flight(
    mongo_db: Any,
) -> None:
    store = RecordStore(mongo_db, batch=10)
    later = T0 + timedelta(seconds=5)
    await mongo_db[RECORDS].insert_many([head("r1", T0), head("r2", later), head("r3", T0)])
    entries = [
        order_id(TENANT, T0, "r1"),
        order_id(TENANT, T0, "r2"),
        order_id(TENANT, later, "r2"),
        order_id(TENANT, T0, "r3"),
        order_id(TENANT, later, "r4"),
    ]
    await mongo_db[ORDER].insert_many(
        [{"_id": e, "record_id": e.rsplit(":", 1)[1]} for e in entries]
    )

    first = await store.list_records(TENANT, filters={}, after=None, limit=2)
    rest = await store.list_records(
        TENANT, filters={}, after=(first[-1]["updated_at"], first[-1]["record_id"]), limit=10
    )

    assert [h["record_id"] for h in first] == ["r1", "r3"]
    assert [h["record_id"] for h in rest] == ["r2"]
    left = {doc["_id"] async for doc in mongo_db[ORDER].find({})}
    assert order_id(TENANT, T0, "r2") not in left, "an entry older than its head is dropped"
    assert order_id(TENANT, later, "r4") in left, "an entry whose head is not written yet stays"


async def test_records_written_before_the_listing_index_are_backfilled_once(mongo_db: Any) -> None:
    store = RecordStore(mongo_db, batch=10)
    await mongo_db[RECORDS].insert_many([head("r1", T0), head("r2", T0 + timedelta(seconds=1))])

    assert await store.list_records(TENANT, filters={}, after=None, limit=10) == []
    assert await store.ensure_order() == 2
    assert await store.ensure_order() == 0, "the backfill runs once per database"

    listed = await store.list_records(TENANT, filters={}, after=None, limit=10)
    assert [h["record_id"] for h in listed] == ["r1", "r2"]
