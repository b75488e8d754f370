"""Hybrid search: dense and lexical candidates filtered inside the engine, every hit with both scores."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from engram_vectors import (
    BaseVectorStore,
    FingerprintMismatch,
    HybridHit,
    InvalidQuery,
    Point,
    SparseVector,
    VectorStoreError,
)

pytestmark = pytest.mark.unit

DIM = 4
FP = "fp-" + "d" * 61
OTHER_FP = "fp-" + "0" * 61
LEX = "engram-lexical-v1"
COLLECTION = "hybrid"
QUERY = [1.0, 0.0, 0.0, 0.0]


def terms(**weights: float) -> SparseVector:
    """A sparse vector from term names t<index>=weight."""
    pairs = sorted((int(name[1:]), weight) for name, weight in weights.items())
    return SparseVector(tuple(i for i, _ in pairs), tuple(w for _, w in pairs))


def idf(population: Sequence[SparseVector], term: int) -> float:
    """Qdrant's IDF of a term over a population of lexical vectors."""
    holding = sum(1 for sparse in population if term in sparse.indices)
    return math.log(1 + (len(population) - holding + 0.5) / (holding + 0.5))


def lexical_score(
    query: SparseVector, document: SparseVector, population: Sequence[SparseVector]
) -> float:
    """Sum over shared terms of query weight * document weight * idf."""
    held = dict(zip(document.indices, document.values, strict=True))
    return sum(
        weight * held[term] * idf(population, term)
        for term, weight in zip(query.indices, query.values, strict=True)
        if term in held
    )


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    left, right = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(left @ right / (np.linalg.norm(left) * np.linalg.norm(right)))


# Tenant t1 has dense-near points (n1, n2, n3), lexical matches (l1, l2, l3) and one point
# holding both; tenant t2 has a point better on both lists than anything of t1's.
POINTS: dict[str, tuple[list[float], dict[str, Any], SparseVector | None]] = {
    "n1": ([1.0, 0.05, 0.0, 0.0], {"tenant_id": "t1", "pinned": True}, terms(t9=1.0)),
    "n2": ([1.0, 0.2, 0.0, 0.0], {"tenant_id": "t1"}, terms(t1=0.3, t8=1.0)),
    "n3": ([1.0, 0.4, 0.0, 0.0], {"tenant_id": "t1"}, None),
    "both": ([1.0, 0.6, 0.0, 0.0], {"tenant_id": "t1"}, terms(t1=2.0, t2=1.0)),
    "l1": ([0.0, 1.0, 0.0, 0.0], {"tenant_id": "t1"}, terms(t1=3.0, t2=2.0)),
    "l2": ([0.1, 0.0, 1.0, 0.0], {"tenant_id": "t1", "pinned": False}, terms(t2=2.5)),
    "l3": ([0.0, 0.0, 0.0, 1.0], {"tenant_id": "t1"}, terms(t1=1.5, t7=1.0)),
    "far": ([0.0, 0.0, 1.0, 1.0], {"tenant_id": "t1"}, terms(t6=1.0)),
    "intruder": ([1.0, 0.0, 0.0, 0.0], {"tenant_id": "t2"}, terms(t1=9.0, t2=9.0)),
    "t2-filler": ([0.0, 1.0, 1.0, 0.0], {"tenant_id": "t2"}, terms(t2=1.0, t5=1.0)),
}
LEXICAL_QUERY = terms(t1=1.0, t2=0.5)


def population(tenant: str | None = None) -> list[SparseVector]:
    """The lexical vectors IDF is computed over: a tenant's, or every point's."""
    return [
        sparse
        for _, payload, sparse in POINTS.values()
        if sparse is not None and (tenant is None or payload["tenant_id"] == tenant)
    ]


async def seeded(store: BaseVectorStore) -> BaseVectorStore:
    await store.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
    await store.upsert(
        COLLECTION,
        [
            Point(name, vector, payload, sparse)
            for name, (vector, payload, sparse) in POINTS.items()
        ],
    )
    return store


def by_id(hits: list[HybridHit]) -> dict[str, HybridHit]:
    return {hit.id: hit for hit in hits}


async def test_every_candidate_has_both_true_scores_in_a_fixed_order(
    store: BaseVectorStore,
) -> None:
    await seeded(store)
    hits = await store.hybrid_search(
        COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=3, filter={"tenant_id": "t1"}
    )
    assert [(hit.id, hit.dense_rank, hit.lexical_rank) for hit in hits] == [
        ("n1", 1, None),
        ("n2", 2, None),
        ("n3", 3, None),
        ("l1", None, 1),
        ("both", None, 2),
        ("l3", None, 3),
    ]
    everyone = population()
    for hit in hits:
        vector, payload, sparse = POINTS[hit.id]
        assert hit.payload == payload
        assert hit.dense == pytest.approx(cosine(QUERY, vector), abs=1e-5)
        expected = 0.0 if sparse is None else lexical_score(LEXICAL_QUERY, sparse, everyone)
        assert hit.lexical == pytest.approx(expected, rel=1e-5, abs=1e-6)
    found = by_id(hits)
    assert found["n1"].lexical == 0.0, "shares no term with the query"
    assert found["n2"].lexical is not None and found["n2"].lexical > 0.0, "dense-only, one term"


async def test_the_filter_applies_inside_both_candidate_lists(store: BaseVectorStore) -> None:
    await seeded(store)
    unfiltered = await store.hybrid_search(COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=3)
    assert by_id(unfiltered)["intruder"].dense_rank == 1
    assert by_id(unfiltered)["intruder"].lexical_rank == 1
    hits = await store.hybrid_search(
        COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=3, filter={"tenant_id": "t1"}
    )
    assert all(hit.payload["tenant_id"] == "t1" for hit in hits)
    assert sorted(hit.dense_rank for hit in hits if hit.dense_rank) == [1, 2, 3]
    assert sorted(hit.lexical_rank for hit in hits if hit.lexical_rank) == [1, 2, 3]


async def test_idf_filter_sets_the_population_idf_is_computed_over(
    store: BaseVectorStore,
) -> None:
    await seeded(store)
    scoped = {"tenant_id": "t1"}
    whole = await store.hybrid_search(
        COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=3, filter=scoped
    )
    tenant = await store.hybrid_search(
        COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=3, filter=scoped, idf_filter=scoped
    )
    sparse = POINTS["l1"][2]
    assert sparse is not None
    whole_l1, tenant_l1 = by_id(whole)["l1"].lexical, by_id(tenant)["l1"].lexical
    assert whole_l1 == pytest.approx(lexical_score(LEXICAL_QUERY, sparse, population()), rel=1e-5)
    assert tenant_l1 == pytest.approx(
        lexical_score(LEXICAL_QUERY, sparse, population("t1")), rel=1e-5
    )
    assert whole_l1 != pytest.approx(tenant_l1, rel=1e-3)
    other = await store.hybrid_search(
        COLLECTION,
        vector=QUERY,
        sparse=LEXICAL_QUERY,
        limit=3,
        filter=scoped,
        idf_filter={"tenant_id": "t2"},
    )
    assert by_id(other)["l1"].lexical == pytest.approx(
        lexical_score(LEXICAL_QUERY, sparse, population("t2")), rel=1e-5
    )


async def test_idf_counts_only_live_lexical_vectors(store: BaseVectorStore) -> None:
    await seeded(store)
    await store.delete(COLLECTION, ["l3", "t2-filler"])
    await store.upsert(COLLECTION, [Point("l2", POINTS["l2"][0], POINTS["l2"][1])])
    hits = await store.hybrid_search(COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=3)
    live = [
        sparse
        for name, (_, _, sparse) in POINTS.items()
        if sparse is not None and name not in {"l3", "t2-filler", "l2"}
    ]
    sparse = POINTS["l1"][2]
    assert sparse is not None
    assert by_id(hits)["l1"].lexical == pytest.approx(
        lexical_score(LEXICAL_QUERY, sparse, live), rel=1e-5
    )


async def test_without_a_lexical_query_only_dense_candidates_come_back(
    store: BaseVectorStore,
) -> None:
    await seeded(store)
    hits = await store.hybrid_search(
        COLLECTION, vector=QUERY, sparse=None, limit=3, filter={"tenant_id": "t1"}
    )
    assert [(hit.id, hit.lexical, hit.lexical_rank) for hit in hits] == [
        ("n1", None, None),
        ("n2", None, None),
        ("n3", None, None),
    ]
    no_terms = await store.hybrid_search(
        COLLECTION, vector=QUERY, sparse=SparseVector((), ()), limit=3, filter={"tenant_id": "t1"}
    )
    assert [(hit.id, hit.lexical, hit.lexical_rank) for hit in no_terms] == [
        ("n1", 0.0, None),
        ("n2", 0.0, None),
        ("n3", 0.0, None),
    ]


@pytest.mark.parametrize("limit", [1, 2, 5, 20])
async def test_limit_bounds_each_candidate_list(store: BaseVectorStore, limit: int) -> None:
    await seeded(store)
    hits = await store.hybrid_search(COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=limit)
    dense_ranks = [hit.dense_rank for hit in hits if hit.dense_rank is not None]
    lexical_ranks = [hit.lexical_rank for hit in hits if hit.lexical_rank is not None]
    assert dense_ranks == list(range(1, min(limit, len(POINTS)) + 1))
    sharing = sum(1 for _, _, sparse in POINTS.values() if sparse and {1, 2} & set(sparse.indices))
    assert sorted(lexical_ranks) == list(range(1, min(limit, sharing) + 1))
    assert len(hits) <= 2 * limit


@pytest.mark.parametrize("limit", [0, -1, 1001, True, 2.0, "3"])
async def test_a_bad_limit_is_refused(store: BaseVectorStore, limit: Any) -> None:
    await seeded(store)
    with pytest.raises(InvalidQuery, match="limit"):
        await store.hybrid_search(COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=limit)


async def test_a_foreign_fingerprint_is_refused(store: BaseVectorStore) -> None:
    await seeded(store)
    with pytest.raises(FingerprintMismatch):
        await store.hybrid_search(
            COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=3, fingerprint=OTHER_FP
        )
    hits = await store.hybrid_search(
        COLLECTION, vector=QUERY, sparse=LEXICAL_QUERY, limit=3, fingerprint=FP
    )
    assert hits


async def test_a_lexical_query_on_a_dense_only_collection_is_a_clear_error(
    store: BaseVectorStore,
) -> None:
    await store.ensure_collection("dense-only", DIM, FP)
    await store.upsert("dense-only", [Point("p", QUERY, {"tenant_id": "t1"})])
    with pytest.raises(VectorStoreError, match="holds no lexical vectors"):
        await store.hybrid_search("dense-only", vector=QUERY, sparse=LEXICAL_QUERY, limit=3)
    (hit,) = await store.hybrid_search("dense-only", vector=QUERY, sparse=None, limit=3)
    assert (hit.id, hit.lexical, hit.dense_rank) == ("p", None, 1)


@pytest.mark.parametrize(
    "sparse",
    [SparseVector((1, 1), (1.0, 1.0)), SparseVector((1,), (0.0,)), SparseVector((1,), ()), (1,)],
)
async def test_a_malformed_lexical_query_is_refused(store: BaseVectorStore, sparse: Any) -> None:
    await seeded(store)
    with pytest.raises(InvalidQuery):
        await store.hybrid_search(COLLECTION, vector=QUERY, sparse=sparse, limit=3)
    with pytest.raises(InvalidQuery):
        await store.hybrid_search(COLLECTION, vector=[0.0] * DIM, sparse=None, limit=3)


def random_corpus(seed: int, count: int) -> tuple[np.ndarray[Any, Any], list[SparseVector]]:
    """Random dense vectors and 2-8 random terms (of 40) per point, with random weights."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(count, DIM))
    sparse = []
    for _ in range(count):
        chosen = np.sort(rng.choice(40, size=int(rng.integers(2, 9)), replace=False))
        weights = rng.uniform(0.1, 3.0, size=len(chosen))
        sparse.append(SparseVector(tuple(int(t) for t in chosen), tuple(float(w) for w in weights)))
    return vectors, sparse


def summary(hits: list[HybridHit]) -> list[tuple[Any, ...]]:
    return [(hit.id, hit.dense_rank, hit.lexical_rank, hit.payload) for hit in hits]


async def test_hybrid_scores_agree_across_adapters(
    store_factory: Callable[[str], BaseVectorStore],
) -> None:
    vectors, sparse = random_corpus(11, 300)
    query = SparseVector((3, 7, 11, 19), (1.0, 0.5, 2.0, 1.5))
    scoped: Mapping[str, Any] = {"tenant_id": "t1"}
    results: dict[str, list[list[HybridHit]]] = {}
    for kind in ("numpy", "edge", "qdrant-memory"):
        built = store_factory(kind)
        await built.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
        await built.upsert(
            COLLECTION,
            [
                Point(f"p{i}", row, {"tenant_id": f"t{i % 3}", "odd": bool(i % 2)}, sparse[i])
                for i, row in enumerate(vectors)
            ],
        )
        runs = []
        for idf_filter in (None, scoped, {"odd": True}):
            runs.append(
                await built.hybrid_search(
                    COLLECTION,
                    vector=vectors[0] + 0.3,
                    sparse=query,
                    limit=10,
                    filter=scoped,
                    idf_filter=idf_filter,
                )
            )
        results[kind] = runs
        await built.close()
    for ranked in zip(results["numpy"], results["edge"], results["qdrant-memory"], strict=True):
        exact, *engines = ranked
        assert len(exact) > 10
        for hits in engines:
            assert summary(hits) == summary(exact)
            for got, want in zip(hits, exact, strict=True):
                assert got.dense == pytest.approx(want.dense, abs=1e-5)
                assert got.lexical == pytest.approx(want.lexical, rel=1e-5)


async def test_without_payloads_hits_carry_engine_ids_and_their_payloads_are_read_later(
    store: BaseVectorStore,
) -> None:
    await seeded(store)
    ask = {"vector": QUERY, "sparse": LEXICAL_QUERY, "limit": 3, "filter": {"tenant_id": "t1"}}
    whole = await store.hybrid_search(COLLECTION, **ask)  # type: ignore[arg-type]
    bare = await store.hybrid_search(COLLECTION, with_payload=False, **ask)  # type: ignore[arg-type]
    assert all(hit.payload == {} for hit in bare)
    assert [(h.dense, h.lexical) for h in bare] == [(h.dense, h.lexical) for h in whole]
    read = await store.hit_payloads(COLLECTION, bare[1:4])
    assert [read[hit.id] for hit in bare[1:4]] == whole[1:4]
    await store.delete(COLLECTION, [whole[1].id])
    assert bare[1].id not in await store.hit_payloads(COLLECTION, bare[1:2])
