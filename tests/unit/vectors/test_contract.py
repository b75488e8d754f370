"""One contract, every adapter: what services may rely on from any VectorStore."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from engram_vectors import (
    BaseVectorStore,
    CollectionNotFound,
    DimensionMismatch,
    Exists,
    FingerprintMismatch,
    InvalidFilter,
    InvalidPoint,
    InvalidQuery,
    Point,
    StoreUnavailable,
    VectorStore,
    VectorStoreError,
)

pytestmark = pytest.mark.unit

DIM = 8
FP = "fp-" + "a" * 61
OTHER_FP = "fp-" + "b" * 61
COLLECTION = "memories"


def basis(index: int, tilt: float = 0.0, tilt_axis: int = 7) -> list[float]:
    """A unit axis vector, optionally tilted towards another axis (lower cosine to the axis)."""
    vector = [0.0] * DIM
    vector[index] = 1.0
    vector[tilt_axis] += tilt
    return vector


def cosine(a: list[float], b: list[float]) -> float:
    left, right = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(left @ right / (np.linalg.norm(left) * np.linalg.norm(right)))


async def seeded(store: BaseVectorStore) -> BaseVectorStore:
    """A collection with two tenants, two agents and a few memory types."""
    await store.ensure_collection(COLLECTION, DIM, FP)
    await store.upsert(
        COLLECTION,
        [
            Point(
                "m-t1-a1-near", basis(0, 0.1), {"tenant_id": "t1", "agent_id": "a1", "type": "fact"}
            ),
            Point("m-t1-a1-far", basis(1), {"tenant_id": "t1", "agent_id": "a1", "type": "chat"}),
            Point(
                "m-t1-a2-mid", basis(0, 0.8), {"tenant_id": "t1", "agent_id": "a2", "type": "fact"}
            ),
            Point("m-t2-a9-exact", basis(0), {"tenant_id": "t2", "agent_id": "a9", "type": "fact"}),
            Point(
                "m-t1-a1-tagged",
                basis(2),
                {"tenant_id": "t1", "agent_id": "a1", "tags": ["x", "y"], "rank": 3},
            ),
        ],
        fingerprint=FP,
    )
    return store


async def test_adapters_satisfy_the_port(store: BaseVectorStore) -> None:
    assert isinstance(store, VectorStore)


async def test_search_returns_the_nearest_first_with_cosine_scores(store: BaseVectorStore) -> None:
    await seeded(store)
    hits = await store.search(COLLECTION, basis(0), top_k=3)
    assert [hit.id for hit in hits] == ["m-t2-a9-exact", "m-t1-a1-near", "m-t1-a2-mid"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[1].score == pytest.approx(cosine(basis(0), basis(0, 0.1)), abs=1e-5)
    assert hits[0].payload == {"tenant_id": "t2", "agent_id": "a9", "type": "fact"}


async def test_other_tenant_never_returns_even_when_nearest(store: BaseVectorStore) -> None:
    await seeded(store)
    hits = await store.search(COLLECTION, basis(0), top_k=10, filter={"tenant_id": "t1"})
    assert "m-t2-a9-exact" not in {hit.id for hit in hits}
    assert all(hit.payload["tenant_id"] == "t1" for hit in hits)
    assert len(hits) == 4
    assert await store.count(COLLECTION, {"tenant_id": "t2"}) == 1


async def test_agent_and_type_filters_combine(store: BaseVectorStore) -> None:
    await seeded(store)
    scoped = {"tenant_id": "t1", "agent_id": "a1", "type": ["fact", "note"]}
    hits = await store.search(COLLECTION, basis(0), top_k=10, filter=scoped)
    assert [hit.id for hit in hits] == ["m-t1-a1-near"]
    assert await store.count(COLLECTION, {"tenant_id": "t1", "agent_id": ["a1", "a2"]}) == 4


async def test_list_payload_fields_and_integer_values_match(store: BaseVectorStore) -> None:
    await seeded(store)
    assert await store.count(COLLECTION, {"tags": "y"}) == 1
    assert await store.count(COLLECTION, {"rank": 3}) == 1
    assert await store.count(COLLECTION, {"rank": [3, "3"]}) == 1
    assert await store.count(COLLECTION, {"rank": "3"}) == 0


async def test_score_threshold_drops_hits_below_the_floor(store: BaseVectorStore) -> None:
    await seeded(store)
    floor = 0.9
    hits = await store.search(COLLECTION, basis(0), top_k=10, score_threshold=floor)
    assert {hit.id for hit in hits} == {"m-t2-a9-exact", "m-t1-a1-near"}
    assert all(hit.score >= floor for hit in hits)
    unfloored = await store.search(COLLECTION, basis(0), top_k=10)
    assert any(hit.score < floor for hit in unfloored)


async def test_delete_removes_points_from_count_and_search(store: BaseVectorStore) -> None:
    await seeded(store)
    await store.delete(COLLECTION, ["m-t2-a9-exact", "never-existed"])
    assert await store.count(COLLECTION) == 4
    hits = await store.search(COLLECTION, basis(0), top_k=10)
    assert "m-t2-a9-exact" not in {hit.id for hit in hits}
    assert await store.get(COLLECTION, ["m-t2-a9-exact"]) == []


async def test_delete_by_filter_removes_exactly_what_count_saw(store: BaseVectorStore) -> None:
    await seeded(store)
    selection = {"tenant_id": "t1", "agent_id": "a1"}
    before_total = await store.count(COLLECTION)
    selected = await store.count(COLLECTION, selection)
    await store.delete_by_filter(COLLECTION, selection)
    assert await store.count(COLLECTION, selection) == 0
    assert await store.count(COLLECTION) == before_total - selected
    hits = await store.search(COLLECTION, basis(0), top_k=10, filter={"tenant_id": "t1"})
    assert [hit.id for hit in hits] == ["m-t1-a2-mid"]


async def test_delete_by_filter_refuses_an_empty_filter(store: BaseVectorStore) -> None:
    await seeded(store)
    with pytest.raises(InvalidFilter):
        await store.delete_by_filter(COLLECTION, {})
    assert await store.count(COLLECTION) == 5


async def test_reupserting_an_id_replaces_the_point(store: BaseVectorStore) -> None:
    await seeded(store)
    await store.upsert(COLLECTION, [Point("m-t1-a1-far", basis(3), {"tenant_id": "t1", "v": 2})])
    await store.upsert(COLLECTION, [Point("m-t1-a1-far", basis(4), {"tenant_id": "t1", "v": 3})])
    assert await store.count(COLLECTION) == 5
    (point,) = await store.get(COLLECTION, ["m-t1-a1-far"])
    assert point.payload == {"tenant_id": "t1", "v": 3}
    assert np.allclose(point.vector, basis(4), atol=1e-6)
    hits = await store.search(COLLECTION, basis(4), top_k=1)
    assert hits[0].id == "m-t1-a1-far"


async def test_get_returns_caller_ids_in_order_with_unit_vectors(store: BaseVectorStore) -> None:
    await seeded(store)
    as_uuid = str(uuid.uuid4())
    await store.upsert(COLLECTION, [Point(as_uuid, [2.0] * DIM, {"tenant_id": "t3"})])
    points = await store.get(COLLECTION, [as_uuid, "missing", "m-t1-a1-far"])
    assert [point.id for point in points] == [as_uuid, "m-t1-a1-far"]
    assert np.allclose(np.linalg.norm(np.asarray(points[0].vector)), 1.0, atol=1e-6)
    assert points[0].payload == {"tenant_id": "t3"}


async def test_dimension_mismatch_is_refused(store: BaseVectorStore) -> None:
    await seeded(store)
    with pytest.raises(DimensionMismatch):
        await store.search(COLLECTION, [1.0] * (DIM + 1), top_k=1)
    with pytest.raises(DimensionMismatch):
        await store.upsert(COLLECTION, [Point("short", [1.0] * (DIM - 1))])
    with pytest.raises(DimensionMismatch):
        await store.ensure_collection(COLLECTION, DIM * 2, FP)


async def test_fingerprint_is_stored_and_enforced(store: BaseVectorStore) -> None:
    await seeded(store)
    assert await store.collection_fingerprint(COLLECTION) == FP
    await store.ensure_collection(COLLECTION, DIM, FP)
    with pytest.raises(FingerprintMismatch):
        await store.ensure_collection(COLLECTION, DIM, OTHER_FP)
    with pytest.raises(FingerprintMismatch):
        await store.search(COLLECTION, basis(0), top_k=1, fingerprint=OTHER_FP)
    with pytest.raises(FingerprintMismatch):
        await store.upsert(COLLECTION, [Point("x", basis(0))], fingerprint=OTHER_FP)
    assert len(await store.search(COLLECTION, basis(0), top_k=1, fingerprint=FP)) == 1


async def test_collections_are_separate(store: BaseVectorStore) -> None:
    await seeded(store)
    await store.ensure_collection("knowledge", 4, OTHER_FP)
    assert await store.count("knowledge") == 0
    assert await store.collection_fingerprint("knowledge") == OTHER_FP
    with pytest.raises(CollectionNotFound):
        await store.count("nowhere")


@pytest.mark.parametrize(
    "bad_filter",
    [
        {"tenant_id": {"$regex": ".*"}},
        {"tenant_id": None},
        {"tenant_id": [True]},
        {"score": [0.5]},
        {"tenant_id": []},
        {"tenant_id": ["t1", {"$ne": "t2"}]},
        {"nested.key.deeper": "x"},
        {"_engram_id": "x"},
    ],
)
async def test_filters_must_be_scalars_or_lists_of_scalars(
    store: BaseVectorStore, bad_filter: Any
) -> None:
    await seeded(store)
    with pytest.raises(InvalidFilter):
        await store.search(COLLECTION, basis(0), top_k=1, filter=bad_filter)
    with pytest.raises(InvalidFilter):
        await store.count(COLLECTION, bad_filter)


async def test_bad_points_and_queries_are_refused(store: BaseVectorStore) -> None:
    await seeded(store)
    with pytest.raises(InvalidPoint):
        await store.upsert(COLLECTION, [Point("zero", [0.0] * DIM)])
    with pytest.raises(InvalidPoint):
        await store.upsert(COLLECTION, [Point("", basis(0))])
    with pytest.raises(InvalidPoint):
        await store.upsert(COLLECTION, [Point("reserved", basis(0), {"_engram_id": "spoof"})])
    with pytest.raises(InvalidPoint):
        await store.upsert(COLLECTION, [Point("nan", [float("nan")] * DIM)])
    with pytest.raises(InvalidQuery):
        await store.search(COLLECTION, basis(0), top_k=0)
    with pytest.raises(InvalidQuery):
        await store.search(COLLECTION, [0.0] * DIM, top_k=1)
    assert await store.count(COLLECTION) == 5


async def test_closed_store_refuses_calls(store: BaseVectorStore) -> None:
    await seeded(store)
    await store.close()
    with pytest.raises(VectorStoreError):
        await store.count(COLLECTION)


@pytest.mark.parametrize("kind", ["edge", "qdrant-path"])
async def test_reopening_from_disk_keeps_points_and_fingerprint(
    store_factory: Callable[[str], BaseVectorStore], kind: str
) -> None:
    first = await seeded(store_factory(kind))
    await first.close()
    reopened = store_factory(kind)
    try:
        assert await reopened.collection_fingerprint(COLLECTION) == FP
        assert await reopened.count(COLLECTION) == 5
        hits = await reopened.search(COLLECTION, basis(0), top_k=1, filter={"tenant_id": "t1"})
        assert hits[0].id == "m-t1-a1-near"
    finally:
        await reopened.close()


async def test_edge_shard_is_used_by_one_store_at_a_time(
    store_factory: Callable[[str], BaseVectorStore],
) -> None:
    first = await seeded(store_factory("edge"))
    second = store_factory("edge")
    try:
        with pytest.raises(StoreUnavailable):
            await second.count(COLLECTION)
    finally:
        await second.close()
        await first.close()


async def test_scores_agree_across_adapters(
    store_factory: Callable[[str], BaseVectorStore],
) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(200, DIM))
    query = rng.normal(size=DIM)
    results = []
    for kind in ("numpy", "edge", "qdrant-memory"):
        built = store_factory(kind)
        await built.ensure_collection(COLLECTION, DIM, FP)
        await built.upsert(
            COLLECTION,
            [Point(f"p{i}", row, {"tenant_id": f"t{i % 3}"}) for i, row in enumerate(vectors)],
        )
        hits = await built.search(COLLECTION, query, top_k=10, filter={"tenant_id": "t1"})
        results.append([(hit.id, round(hit.score, 4)) for hit in hits])
        await built.close()
    assert results[0] == results[1] == results[2]
    assert len(results[0]) == 10


async def test_concurrent_ensures_agree_on_one_fingerprint(store: BaseVectorStore) -> None:
    outcomes = await asyncio.gather(
        store.ensure_collection("raced", DIM, FP),
        store.ensure_collection("raced", DIM, OTHER_FP),
        store.ensure_collection("raced", DIM, FP),
        return_exceptions=True,
    )
    assert [type(outcome) for outcome in outcomes].count(FingerprintMismatch) == 1
    assert await store.collection_fingerprint("raced") == FP


async def test_set_payload_merges_fields_and_keeps_vectors(store: BaseVectorStore) -> None:
    await seeded(store)
    (before,) = await store.get(COLLECTION, ["m-t1-a1-near"])
    await store.set_payload(
        COLLECTION,
        ["m-t1-a1-near", "m-t1-a1-far", "never-existed"],
        {"status": "superseded", "pinned": True, "type": {"kind": "fact"}},
    )
    near, far = await store.get(COLLECTION, ["m-t1-a1-near", "m-t1-a1-far"])
    assert near.payload == {
        "tenant_id": "t1",
        "agent_id": "a1",
        "type": {"kind": "fact"},
        "status": "superseded",
        "pinned": True,
    }
    assert far.payload["status"] == "superseded"
    assert np.allclose(near.vector, before.vector, atol=1e-6)
    assert await store.count(COLLECTION) == 5
    assert await store.get(COLLECTION, ["never-existed"]) == []
    assert await store.count(COLLECTION, {"status": "superseded", "pinned": True}) == 2
    hits = await store.search(COLLECTION, basis(0), top_k=1, filter={"type.kind": "fact"})
    assert [hit.id for hit in hits] == ["m-t1-a1-near"]


async def test_set_payload_refuses_reserved_fields(store: BaseVectorStore) -> None:
    await seeded(store)
    with pytest.raises(InvalidPoint):
        await store.set_payload(COLLECTION, ["m-t1-a1-near"], {"_engram_id": "spoof"})
    with pytest.raises(InvalidPoint):
        await store.set_payload(COLLECTION, ["m-t1-a1-near"], {"note": "\x00engram:bool:true"})
    with pytest.raises(CollectionNotFound):
        await store.set_payload("nowhere", ["m-t1-a1-near"], {"status": "x"})
    (point,) = await store.get(COLLECTION, ["m-t1-a1-near"])
    assert point.payload == {"tenant_id": "t1", "agent_id": "a1", "type": "fact"}


async def test_scroll_returns_matching_ids_and_payloads_up_to_the_limit(
    store: BaseVectorStore,
) -> None:
    await seeded(store)
    found = await store.scroll(COLLECTION, {"tenant_id": "t1"}, limit=10)
    assert sorted(item.id for item in found) == [
        "m-t1-a1-far",
        "m-t1-a1-near",
        "m-t1-a1-tagged",
        "m-t1-a2-mid",
    ]
    near = next(item for item in found if item.id == "m-t1-a1-near")
    assert near.payload == {"tenant_id": "t1", "agent_id": "a1", "type": "fact"}
    assert len(await store.scroll(COLLECTION, {"tenant_id": "t1"}, limit=2)) == 2
    assert len(await store.scroll(COLLECTION, limit=10)) == 5
    assert [item.id for item in await store.scroll(COLLECTION, {"tags": "y"}, limit=3)] == [
        "m-t1-a1-tagged"
    ]
    with pytest.raises(CollectionNotFound):
        await store.scroll("nowhere", limit=1)


async def test_scrolling_for_a_missing_field_until_none_is_left_backfills_it(
    store: BaseVectorStore,
) -> None:
    await seeded(store)
    missing = {"status": Exists(False)}
    rounds = 0
    while batch := await store.scroll(COLLECTION, missing, limit=2):
        rounds += 1
        await store.set_payload(COLLECTION, [item.id for item in batch], {"status": "active"})
    assert rounds == 3
    assert await store.count(COLLECTION, {"status": "active"}) == 5
