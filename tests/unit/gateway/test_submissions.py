"""An accepted write is remembered once per id, and a lost insert race still records it."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest
from pymongo import UpdateOne
from pymongo.errors import BulkWriteError, DuplicateKeyError

from engram_gateway.adapters.submissions import SUBMISSIONS, Submissions
from engram_gateway.domain.submissions import Submission

pytestmark = pytest.mark.unit


class FakeCollection:
    """Upserts by `_id` with `$set`/`$setOnInsert`, honouring a `released_at: {$exists: false}`
    condition (a row it excludes makes the upsert's insert fail on the duplicate key); the first
    `races` writes fail as a concurrent insert makes them fail on the local server (a duplicate
    key alone, a reply without `nModified` in bulk, nothing written)."""

    def __init__(self, races: int = 0) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.races = races
        self.trips = 0
        self.bulk_sizes: list[int] = []

    def _raced(self) -> bool:
        self.trips += 1
        if self.races:
            self.races -= 1
            return True
        return False

    def _upsert(self, key: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any] | None:
        before = self.rows.get(key["_id"])
        before = dict(before) if before is not None else None
        if before is not None and "released_at" in key and "released_at" in before:
            raise DuplicateKeyError("E11000 duplicate key")
        row = self.rows.setdefault(
            key["_id"], {"_id": key["_id"], **update.get("$setOnInsert", {})}
        )
        row.update(update["$set"])
        for field in update.get("$unset", {}):
            row.pop(field, None)
        return before

    async def find_one_and_update(
        self, key: dict[str, Any], update: dict[str, Any], **options: Any
    ) -> dict[str, Any] | None:
        assert options["upsert"]
        if self._raced():
            raise DuplicateKeyError("E11000 duplicate key")
        return self._upsert(key, update)

    async def bulk_write(self, ops: list[UpdateOne], ordered: bool) -> SimpleNamespace:
        self.bulk_sizes.append(len(ops))
        if self._raced():
            raise KeyError("nModified")
        upserted, failed = {}, False
        for index, op in enumerate(ops):
            assert isinstance(op._doc, Mapping), "the store sends $set documents, not pipelines"
            try:
                if self._upsert(op._filter, op._doc) is None:
                    upserted[index] = op._filter["_id"]
            except DuplicateKeyError:
                failed = True
        if failed:
            raise KeyError("nModified")
        return SimpleNamespace(upserted_count=len(upserted), upserted_ids=upserted)

    async def insert_many(self, docs: list[dict[str, Any]], ordered: bool) -> None:
        self.trips += 1
        held = [n for n, doc in enumerate(docs) if doc["_id"] in self.rows]
        for n, doc in enumerate(docs):
            if n not in held:
                self.rows[doc["_id"]] = dict(doc)
        if held:
            errors = [{"index": n, "code": 11000} for n in held]
            raise BulkWriteError({"writeErrors": errors})

    def find(self, query: Mapping[str, Any], projection: Mapping[str, Any]) -> Any:
        rows = [dict(self.rows[i]) for i in query["_id"]["$in"] if i in self.rows]

        async def each() -> Any:
            for row in rows:
                yield row

        return each()

    async def find_one_and_release(self, item_id: str) -> None:
        self.rows[item_id]["released_at"] = "then"


def submissions(collection: FakeCollection) -> Submissions:
    return Submissions({SUBMISSIONS: collection})


async def test_a_recorded_write_is_kept_under_its_tenant_kind_and_id() -> None:
    collection = FakeCollection()
    store = submissions(collection)
    await store.record("tnt_1", "document", "doc_1", version="v1")
    await store.record("tnt_1", "document", "doc_1", version="v2")
    assert list(collection.rows) == ["tnt_1:document:doc_1"]
    row = collection.rows["tnt_1:document:doc_1"]
    assert (row["tenant_id"], row["kind"], row["version"]) == ("tnt_1", "document", "v2")


async def test_a_write_that_lost_the_insert_race_is_retried_once_and_recorded() -> None:
    collection = FakeCollection(races=1)
    await submissions(collection).record("tnt_1", "import", "imp_1", row_count=3)
    assert collection.trips == 2
    assert collection.rows["tnt_1:import:imp_1"]["row_count"] == 3


async def test_many_new_writes_go_in_one_insert() -> None:
    collection = FakeCollection()
    items = [(f"m{n}", {"agent_id": "a1"}) for n in range(3)]
    assert await submissions(collection).record_many("tnt_1", "memory", items) == 3
    assert (collection.trips, collection.bulk_sizes) == (1, [])
    row = collection.rows["tnt_1:memory:m2"]
    assert (row["tenant_id"], row["kind"], row["agent_id"]) == ("tnt_1", "memory", "a1")


async def test_a_bulk_write_that_lost_a_race_is_written_row_by_row() -> None:
    collection = FakeCollection()
    store = submissions(collection)
    await store.record("tnt_1", "memory", "m0")
    collection.trips, collection.races = 0, 1
    items = [(f"m{n}", {"agent_id": "a1"}) for n in range(3)]
    assert await store.record_many("tnt_1", "memory", items) == 2
    assert collection.trips == 3, "the insert, the upsert of the held id that raced, then alone"
    assert sorted(collection.rows) == [f"tnt_1:memory:m{n}" for n in range(3)]
    assert collection.rows["tnt_1:memory:m0"]["agent_id"] == "a1"


async def test_recording_answers_what_it_replaced_so_a_retry_is_not_counted_again() -> None:
    store = submissions(FakeCollection())
    assert await store.record("tnt_1", "document", "doc_1", version="v1") is None
    previous = await store.record("tnt_1", "document", "doc_1", version="v2")
    assert previous is not None and previous.version == "v1"


async def test_recording_many_answers_how_many_ids_are_new() -> None:
    store = submissions(FakeCollection())
    assert await store.record_many("tnt_1", "memory", [("m1", {}), ("m2", {})]) == 2
    assert await store.record_many("tnt_1", "memory", [("m2", {}), ("m3", {})]) == 1


async def test_a_raced_bulk_write_still_answers_how_many_ids_are_new() -> None:
    collection = FakeCollection()
    store = submissions(collection)
    await store.record("tnt_1", "memory", "m1")
    collection.races = 1
    assert await store.record_many("tnt_1", "memory", [("m1", {}), ("m2", {})]) == 1


async def test_writes_arriving_while_a_trip_is_on_its_way_go_together_in_the_next() -> None:
    collection = FakeCollection()
    store = submissions(collection)
    answers = await asyncio.gather(
        *(store.record("tnt_1", "memory", f"m{n}", agent_id="a1") for n in range(5))
    )
    assert answers == [None] * 5
    assert collection.bulk_sizes == [5]
    again = await asyncio.gather(
        store.record("tnt_1", "memory", "m0", agent_id="a1"),
        store.record("tnt_2", "memory", "m0", agent_id="a2"),
    )
    assert again == [Submission("memory", "m0"), None]
    assert sorted(collection.rows) == sorted(
        [f"tnt_1:memory:m{n}" for n in range(5)] + ["tnt_2:memory:m0"]
    )
    assert collection.rows["tnt_2:memory:m0"]["agent_id"] == "a2"


async def released(memory_id: str) -> tuple[FakeCollection, Submissions]:
    """A store whose row for `memory_id` was recorded, then given back."""
    collection = FakeCollection()
    store = submissions(collection)
    await store.record("tnt_1", "memory", memory_id)
    await collection.find_one_and_release(f"tnt_1:memory:{memory_id}")
    return collection, store


async def test_a_written_back_row_given_back_is_answered_whole_so_it_is_counted_again() -> None:
    collection, store = await released("m1")
    answers = await asyncio.gather(
        store.record("tnt_1", "memory", "m1"), store.record("tnt_1", "memory", "m2")
    )
    assert answers[0] is not None and not answers[0].held
    assert answers[1] is None, "the trip's other write is told apart by reading rows back"
    assert "released_at" not in collection.rows["tnt_1:memory:m1"]


async def test_a_trip_that_lost_a_race_writes_its_writes_alone() -> None:
    collection = FakeCollection(races=1)
    store = submissions(collection)
    answers = await asyncio.gather(*(store.record("tnt_1", "memory", f"m{n}") for n in range(3)))
    assert answers == [None] * 3
    assert collection.trips == 4


async def test_one_id_twice_in_a_trip_read_back_is_new_once() -> None:
    _, store = await released("m0")
    answers = await asyncio.gather(
        store.record("tnt_1", "memory", "m0"),
        store.record("tnt_1", "memory", "m1"),
        store.record("tnt_1", "memory", "m1"),
    )
    assert answers[0] is not None and not answers[0].held
    assert answers[1:] == [None, Submission("memory", "m1")]


async def test_a_given_back_id_recorded_again_in_bulk_is_held_again() -> None:
    collection = FakeCollection()
    store = submissions(collection)
    assert await store.record_many("tnt_1", "memory", [("m1", {"agent_id": "a1"})]) == 1
    await collection.find_one_and_release("tnt_1:memory:m1")
    assert await store.record_many("tnt_1", "memory", [("m1", {"agent_id": "a2"})]) == 0
    row = collection.rows["tnt_1:memory:m1"]
    assert "released_at" not in row and row["agent_id"] == "a2"
