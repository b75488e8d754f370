"""An accepted write is remembered once per id, and a lost insert race still records it."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest
from pymongo import UpdateOne
from pymongo.errors import DuplicateKeyError

from engram_gateway.adapters.submissions import SUBMISSIONS, Submissions

pytestmark = pytest.mark.unit


class FakeCollection:
    """`$set` upserts by `_id`; the first `races` writes fail as a concurrent insert makes them
    fail on the local server (a duplicate key alone, a reply without `nModified` in bulk)."""

    def __init__(self, races: int = 0) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.races = races
        self.trips = 0

    def _raced(self) -> bool:
        self.trips += 1
        if self.races:
            self.races -= 1
            return True
        return False

    def _upsert(self, key: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any] | None:
        before = self.rows.get(key["_id"])
        before = dict(before) if before is not None else None
        self.rows.setdefault(key["_id"], {"_id": key["_id"]}).update(update["$set"])
        return before

    async def find_one_and_update(
        self, key: dict[str, Any], update: dict[str, Any], **options: Any
    ) -> dict[str, Any] | None:
        assert options["upsert"]
        if self._raced():
            raise DuplicateKeyError("E11000 duplicate key")
        return self._upsert(key, update)

    async def bulk_write(self, ops: list[UpdateOne], ordered: bool) -> SimpleNamespace:
        if self._raced():
            raise KeyError("nModified")
        new = 0
        for op in ops:
            assert isinstance(op._doc, Mapping), "the store sends $set documents, not pipelines"
            new += self._upsert(op._filter, op._doc) is None
        return SimpleNamespace(upserted_count=new)


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


async def test_a_bulk_write_that_lost_a_race_is_written_row_by_row() -> None:
    collection = FakeCollection(races=1)
    items = [(f"m{n}", {"agent_id": "a1"}) for n in range(3)]
    await submissions(collection).record_many("tnt_1", "memory", items)
    assert collection.trips == 4
    assert sorted(collection.rows) == [f"tnt_1:memory:m{n}" for n in range(3)]


async def test_recording_answers_what_it_replaced_so_a_retry_is_not_counted_again() -> None:
    store = submissions(FakeCollection())
    assert await store.record("tnt_1", "document", "doc_1", version="v1") is None
    previous = await store.record("tnt_1", "document", "doc_1", version="v2")
    assert previous is not None and previous["version"] == "v1"


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
