"""Lexical collections: a sparse vector beside the dense one, tied to one lexical encoder."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram_vectors import (
    BaseVectorStore,
    CollectionInfo,
    InvalidPoint,
    LexicalMismatch,
    Point,
    SparseVector,
)

pytestmark = pytest.mark.unit

DIM = 4
FP = "fp-" + "e" * 61
LEX = "engram-lexical-v1"
COLLECTION = "lexical"


def dense(index: int) -> list[float]:
    vector = [0.0] * DIM
    vector[index] = 1.0
    return vector


def assert_sparse(
    got: SparseVector | None, indices: tuple[int, ...], values: tuple[float, ...]
) -> None:
    """Indices exactly, weights as the engines store them (32-bit floats)."""
    assert got is not None
    assert got.indices == indices
    assert got.values == pytest.approx(values, rel=1e-6)


async def test_a_lexical_collection_records_its_encoder(store: BaseVectorStore) -> None:
    await store.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
    await store.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
    assert await store.collection_info(COLLECTION) == CollectionInfo(DIM, FP, LEX)
    await store.ensure_collection("dense-only", DIM, FP)
    assert await store.collection_info("dense-only") == CollectionInfo(DIM, FP, None)


@pytest.mark.parametrize(
    ("stored", "asked"), [(LEX, "engram-lexical-v2"), (LEX, None), (None, LEX)]
)
async def test_another_lexical_encoder_is_refused(
    store: BaseVectorStore, stored: str | None, asked: str | None
) -> None:
    await store.ensure_collection(COLLECTION, DIM, FP, lexical=stored)
    with pytest.raises(LexicalMismatch) as refused:
        await store.ensure_collection(COLLECTION, DIM, FP, lexical=asked)
    message = str(refused.value)
    assert repr(stored) in message if stored else "no lexical vectors" in message
    assert repr(asked) in message if asked else "no lexical vectors" in message
    assert (await store.collection_info(COLLECTION)).lexical == stored


async def test_concurrent_ensures_agree_on_one_encoder(store: BaseVectorStore) -> None:
    outcomes = await asyncio.gather(
        store.ensure_collection("raced", DIM, FP, lexical=LEX),
        store.ensure_collection("raced", DIM, FP, lexical="other"),
        store.ensure_collection("raced", DIM, FP, lexical=LEX),
        return_exceptions=True,
    )
    assert [type(outcome) for outcome in outcomes].count(LexicalMismatch) == 1
    assert (await store.collection_info("raced")).lexical == LEX


async def test_sparse_vectors_are_stored_sorted_beside_the_dense_one(
    store: BaseVectorStore,
) -> None:
    await store.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
    await store.upsert(
        COLLECTION,
        [
            Point("both", dense(0), {"n": 1}, SparseVector((9, 2, 2**32 - 1), (0.5, 1.25, 3.0))),
            Point("dense-only", dense(1), {"n": 2}),
            Point("no-terms", dense(2), {"n": 3}, SparseVector((), ())),
        ],
    )
    both, dense_only, no_terms = await store.get(COLLECTION, ["both", "dense-only", "no-terms"])
    assert_sparse(both.sparse, (2, 9, 2**32 - 1), (1.25, 0.5, 3.0))
    assert np.allclose(both.vector, dense(0), atol=1e-6)
    assert dense_only.sparse is None and no_terms.sparse is None
    assert np.allclose(no_terms.vector, dense(2), atol=1e-6)
    assert await store.count(COLLECTION) == 3


async def test_set_payload_and_reupsert_keep_or_replace_the_sparse_vector(
    store: BaseVectorStore,
) -> None:
    await store.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
    await store.upsert(
        COLLECTION, [Point("p", dense(0), {"v": 1}, SparseVector((1, 2), (1.0, 2.0)))]
    )
    await store.set_payload(COLLECTION, ["p"], {"v": 2})
    (point,) = await store.get(COLLECTION, ["p"])
    assert point.payload == {"v": 2}
    assert_sparse(point.sparse, (1, 2), (1.0, 2.0))
    await store.upsert(COLLECTION, [Point("p", dense(0), {"v": 3})])
    (point,) = await store.get(COLLECTION, ["p"])
    assert point.sparse is None


async def test_a_sparse_vector_on_a_dense_only_collection_is_refused(
    store: BaseVectorStore,
) -> None:
    await store.ensure_collection(COLLECTION, DIM, FP)
    for sparse in (SparseVector((1,), (1.0,)), SparseVector((), ())):
        with pytest.raises(InvalidPoint, match="no lexical vectors"):
            await store.upsert(COLLECTION, [Point("p", dense(0), {}, sparse)])
    assert await store.count(COLLECTION) == 0


@pytest.mark.parametrize(
    "sparse",
    [
        SparseVector((1, 2), (1.0,)),
        SparseVector((1, 1), (1.0, 2.0)),
        SparseVector((-1,), (1.0,)),
        SparseVector((2**32,), (1.0,)),
        SparseVector((True,), (1.0,)),
        SparseVector((1.0,), (1.0,)),  # type: ignore[arg-type]
        SparseVector(("1",), (1.0,)),  # type: ignore[arg-type]
        SparseVector((1,), (float("nan"),)),
        SparseVector((1,), (float("inf"),)),
        SparseVector((1,), (0.0,)),
        SparseVector((1,), (-0.5,)),
        SparseVector((1,), (True,)),
        SparseVector(((1, 2),), (1.0,)),  # type: ignore[arg-type]
        SparseVector("12", (1.0, 1.0)),  # type: ignore[arg-type]
        (1, 2),
    ],
)
async def test_malformed_sparse_vectors_are_refused(store: BaseVectorStore, sparse: Any) -> None:
    await store.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
    with pytest.raises(InvalidPoint):
        await store.upsert(COLLECTION, [Point("p", dense(0), {}, sparse)])
    assert await store.count(COLLECTION) == 0


async def test_numpy_typed_terms_are_accepted(store: BaseVectorStore) -> None:
    await store.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
    sparse = SparseVector(np.array([7, 3], dtype=np.int64), np.array([1, 2], dtype=np.float32))  # type: ignore[arg-type]
    await store.upsert(COLLECTION, [Point("p", dense(0), {}, sparse)])
    (point,) = await store.get(COLLECTION, ["p"])
    assert_sparse(point.sparse, (3, 7), (2.0, 1.0))


@pytest.mark.parametrize("kind", ["edge", "qdrant-path"])
async def test_reopening_keeps_the_encoder_and_the_sparse_vectors(
    store_factory: Callable[[str], BaseVectorStore], kind: str
) -> None:
    first = store_factory(kind)
    await first.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
    await first.upsert(COLLECTION, [Point("p", dense(0), {}, SparseVector((4, 1), (1.0, 0.5)))])
    await first.close()
    reopened = store_factory(kind)
    try:
        assert await reopened.collection_info(COLLECTION) == CollectionInfo(DIM, FP, LEX)
        (point,) = await reopened.get(COLLECTION, ["p"])
        assert_sparse(point.sparse, (1, 4), (0.5, 1.0))
        with pytest.raises(LexicalMismatch):
            await reopened.ensure_collection(COLLECTION, DIM, FP)
    finally:
        await reopened.close()


async def test_an_edge_sidecar_from_before_lexical_reads_as_none(
    store_factory: Callable[[str], BaseVectorStore], store_dir: Path
) -> None:
    first = store_factory("edge")
    await first.ensure_collection(COLLECTION, DIM, FP)
    await first.close()
    sidecar = store_dir / "edge" / COLLECTION / "collection.json"
    body = json.loads(sidecar.read_text())
    del body["lexical"]
    sidecar.write_text(json.dumps(body))
    reopened = store_factory("edge")
    try:
        assert await reopened.collection_info(COLLECTION) == CollectionInfo(DIM, FP, None)
        await reopened.ensure_collection(COLLECTION, DIM, FP)
    finally:
        await reopened.close()
