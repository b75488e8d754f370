"""Every filter form means the same on every adapter: the numpy reading agrees with both engines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from engram_vectors import BaseVectorStore, Exists, InvalidFilter, InvalidPoint, Point, Range

pytestmark = pytest.mark.unit

DIM = 4
FP = "fp-" + "f" * 61
COLLECTION = "filtered"
PLUS_TWO = timezone(timedelta(hours=2))
MINUS_FIVE = timezone(timedelta(hours=-5))

PAYLOADS: dict[str, dict[str, Any]] = {
    "a": {
        "kind": "note",
        "score": 0.5,
        "rank": 3,
        "at": "2024-05-01T10:00:00+02:00",
        "metadata": {"source": "mail", "weight": 1.25, "my-key": "x", "pinned": False},
        "flag": True,
        "gone": None,
    },
    "b": {
        "kind": "note",
        "score": 2,
        "rank": 3.0,
        "at": "2024-05-01T07:30:00Z",
        "metadata": {"source": ["web", "mail"], "weight": 2, "pinned": True},
        "flag": False,
        "tags": [],
    },
    "c": {
        "kind": "chat",
        "score": "0.5",
        "at": "2024-05-01 09:00:00",
        "metadata": [{"source": "mail"}],
        "flag": 1,
        "tags": ["x"],
    },
    "d": {
        "kind": "chat",
        "score": [0.5, 9],
        "at": "not a date",
        "metadata": {"source": None},
        "tags": [None],
    },
    "e": {
        "score": True,
        "at": ["garbage", "2024-05-02T00:00:00+00:00"],
        "metadata": "flat",
        "flags": [False, "x"],
    },
}

CASES: list[tuple[dict[str, Any], set[str]]] = [
    ({"metadata.source": "mail"}, {"a", "b"}),
    ({"metadata.my-key": "x"}, {"a"}),
    ({"metadata.source": ["web", "other"]}, {"b"}),
    ({"score": 0.5}, {"a", "d"}),
    ({"rank": 3}, {"a"}),
    ({"rank": 3.0}, {"a", "b"}),
    ({"score": Range(gte=1)}, {"b", "d"}),
    ({"score": Range(lte=0.5)}, {"a", "d"}),
    ({"metadata.weight": Range(gte=1.0, lte=2.0)}, {"a", "b"}),
    (
        {
            "at": Range(
                gte=datetime(2024, 5, 1, 8, tzinfo=UTC), lte=datetime(2024, 5, 1, 8, tzinfo=UTC)
            )
        },
        {"a"},
    ),
    ({"at": Range(lte=datetime(2024, 5, 1, 9, tzinfo=UTC))}, {"a", "b", "c"}),
    ({"at": Range(gte=datetime(2024, 5, 1, 11, tzinfo=PLUS_TWO))}, {"c", "e"}),
    ({"at": Range(gte=datetime(2024, 5, 1, 9, 30, tzinfo=MINUS_FIVE))}, {"e"}),
    ({"gone": Exists(True)}, set()),
    ({"gone": Exists(False)}, {"a", "b", "c", "d", "e"}),
    ({"tags": Exists(True)}, {"c", "d"}),
    ({"tags": Exists(False)}, {"a", "b", "e"}),
    ({"metadata.source": Exists(True)}, {"a", "b"}),
    ({"metadata.source": Exists(False)}, {"c", "d", "e"}),
    ({"kind": "note", "metadata.source": "mail", "score": Range(lte=1)}, {"a"}),
    ({"flag": True}, {"a"}),
    ({"flag": False}, {"b"}),
    ({"flag": 1}, {"c"}),
    ({"flag": Exists(False)}, {"d", "e"}),
    ({"metadata.pinned": True}, {"b"}),
    ({"metadata.pinned": False}, {"a"}),
    ({"flags": False}, {"e"}),
    ({"flags": "x"}, {"e"}),
    ({"score": Range(gte=0.9, lte=1.1)}, set()),
    ({"score": 1}, set()),
]


async def filtered(store: BaseVectorStore) -> BaseVectorStore:
    """A collection whose payloads exercise each condition kind's edge cases."""
    await store.ensure_collection(COLLECTION, DIM, FP)
    await store.upsert(
        COLLECTION,
        [
            Point(name, [1.0, float(n), 0.0, 0.5], payload)
            for n, (name, payload) in enumerate(PAYLOADS.items())
        ],
    )
    return store


@pytest.mark.parametrize(("payload_filter", "expected"), CASES)
async def test_each_condition_kind_selects_the_same_points(
    store: BaseVectorStore, payload_filter: dict[str, Any], expected: set[str]
) -> None:
    await filtered(store)
    assert await store.count(COLLECTION, payload_filter) == len(expected)
    hits = await store.search(COLLECTION, [1.0, 0.0, 0.0, 0.0], top_k=10, filter=payload_filter)
    assert {hit.id for hit in hits} == expected


async def test_delete_by_filter_takes_the_richer_forms(store: BaseVectorStore) -> None:
    await filtered(store)
    await store.delete_by_filter(COLLECTION, {"metadata.source": Exists(False)})
    assert {point.id for point in await store.get(COLLECTION, list(PAYLOADS))} == {"a", "b"}


@pytest.mark.parametrize(
    "bad_filter",
    [
        {"a.b.c": "x"},
        {"metadata.": "x"},
        {".source": "x"},
        {"metadata.my key": "x"},
        {"metadata." + "k" * 65: "x"},
        {"kind\n": "note"},
        {"tags": [0.5]},
        {"flag": [True]},
        {"kind": "\x00engram:bool:true"},
        {"kind": ["note", "\x00engram:x"]},
        {"score": float("nan")},
        {"score": float("inf")},
        {"score": Range()},
        {"score": Range(gte=2, lte=1)},
        {"score": Range(gte=True)},
        {"score": Range(lte=float("nan"))},
        {"at": Range(gte=datetime(2024, 1, 1))},
        {"at": Range(gte=datetime(2024, 1, 1, tzinfo=UTC), lte=5)},
        {"at": Range(gte=datetime(2024, 1, 2, tzinfo=UTC), lte=datetime(2024, 1, 1, tzinfo=UTC))},
        {"score": Exists("yes")},  # type: ignore[arg-type]  # malformed on purpose
        {"score": {"$gt": 1}},
        {"score": None},
    ],
)
async def test_malformed_filters_are_refused(store: BaseVectorStore, bad_filter: Any) -> None:
    await filtered(store)
    with pytest.raises(InvalidFilter):
        await store.count(COLLECTION, bad_filter)


DATETIME_FORMS = {
    "2024-05-01T09:00:00Z": True,
    "2024-05-01t09:00:00z": True,
    "2024-05-01 09:00:00": True,
    "2024-05-01  09:00:00 UTC": True,
    "2024-05-01T11:00:00+02:00": True,
    "2024-05-01T11:00:00+0200": True,
    "2024-05-01T11:00:00 +02": True,
    "2024-05-01T04:00:00-05:00": True,
    "2024-5-1T9:0:0Z": True,
    "2024-05-01T09:00": True,
    "2024-05-01T09:00:00.000000000Z": True,
    "  2024-05-01T09:00:00Z": True,
    "2024-05-01T09:00Z": False,
    "2024-05-01T09:00:00.Z": False,
    "2024-05-01T09:00:00,0Z": False,
    "20240501T090000Z": False,
    "2024-W18-3": False,
    "2024-05-01T09:00:00GMT": False,
    "2024-02-30T09:00:00Z": False,
    "2024-05-01T24:00:00Z": False,
    "May 1 2024 09:00": False,
}


async def test_stored_datetime_forms_read_alike(store: BaseVectorStore) -> None:
    await store.ensure_collection(COLLECTION, DIM, FP)
    await store.upsert(
        COLLECTION,
        [
            Point(f"form-{n}", [1.0, 0.0, 0.0, 0.0], {"at": form})
            for n, form in enumerate(DATETIME_FORMS)
        ],
    )
    nine = datetime(2024, 5, 1, 9, tzinfo=UTC)
    hits = await store.search(
        COLLECTION, [1.0, 0.0, 0.0, 0.0], top_k=100, filter={"at": Range(gte=nine, lte=nine)}
    )
    matched = {hit.payload["at"] for hit in hits}
    assert matched == {form for form, read in DATETIME_FORMS.items() if read}


async def test_booleans_round_trip_exactly(store: BaseVectorStore) -> None:
    await filtered(store)
    points = {point.id: point.payload for point in await store.get(COLLECTION, list(PAYLOADS))}
    assert points == PAYLOADS
    hits = await store.search(COLLECTION, [1.0, 0.0, 0.0, 0.0], top_k=10, filter={"flag": True})
    assert [hit.payload for hit in hits] == [PAYLOADS["a"]]
    assert type(hits[0].payload["flag"]) is bool


@pytest.mark.parametrize(
    "payload",
    [
        {"note": "\x00engram:bool:true"},
        {"metadata": {"note": "\x00engram:bool:false"}},
        {"tags": ["ok", "\x00engram:anything"]},
    ],
)
async def test_reserved_strings_are_refused_in_payloads(
    store: BaseVectorStore, payload: dict[str, Any]
) -> None:
    await filtered(store)
    with pytest.raises(InvalidPoint):
        await store.upsert(COLLECTION, [Point("reserved", [1.0, 0.0, 0.0, 0.0], payload)])
    assert await store.count(COLLECTION) == len(PAYLOADS)
