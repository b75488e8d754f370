"""The edge store's one-IDF-per-recall schedule answers exactly as the two-batch plan did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram_vectors import BaseVectorStore, HybridHit, Point, QdrantEdgeStore, SparseVector
from engram_vectors.hybrid import HybridPlan

pytestmark = pytest.mark.unit

DIM = 8
FP = "fp-" + "e" * 61
LEX = "engram-lexical-v2"
COLLECTION = "schedule"


class TwoBatchEdgeStore(QdrantEdgeStore):
    """The edge engine run through the plan's candidates-then-completions batches."""

    async def _run_hybrid(self, name: str, plan: HybridPlan) -> list[HybridHit]:
        return await BaseVectorStore._run_hybrid(self, name, plan)


def corpus(seed: int, count: int) -> list[Point]:
    """Random points over three agents, each with 1-8 of 60 terms."""
    rng = np.random.default_rng(seed)
    points = []
    for i in range(count):
        chosen = np.sort(rng.choice(60, size=int(rng.integers(1, 9)), replace=False))
        weights = rng.uniform(0.1, 3.0, size=len(chosen))
        sparse = SparseVector(tuple(int(t) for t in chosen), tuple(float(w) for w in weights))
        payload = {"tenant_id": "t", "agent_id": f"a{i % 3}", "odd": bool(i % 2)}
        points.append(Point(f"p{i}", rng.normal(size=DIM).tolist(), payload, sparse))
    return points


def exact(hits: list[HybridHit]) -> list[tuple[Any, ...]]:
    """Everything a hit carries, scores to the bit."""
    return [
        (hit.id, hit.payload, hit.dense, hit.lexical, hit.dense_rank, hit.lexical_rank)
        for hit in hits
    ]


async def answers(store: QdrantEdgeStore, points: list[Point]) -> list[list[tuple[Any, ...]]]:
    """Hybrid answers over filters, IDF scopes, limits and queries (one without terms)."""
    await store.ensure_collection(COLLECTION, DIM, FP, lexical=LEX)
    await store.upsert(COLLECTION, points)
    await store.delete(COLLECTION, ["p3", "p4", "p5"])
    rng = np.random.default_rng(7)
    queries = [
        SparseVector((1, 5, 9), (1.0, 0.5, 2.0)),
        SparseVector((59,), (1.0,)),
        SparseVector((), ()),
        None,
    ]
    found = []
    for sparse in queries:
        for limit in (1, 5, 20):
            for agents in (["a0"], ["a1", "a2"]):
                scope = {"tenant_id": "t", "agent_id": agents}
                for with_payload in (True, False):
                    hits = await store.hybrid_search(
                        COLLECTION,
                        vector=rng.normal(size=DIM).tolist(),
                        sparse=sparse,
                        limit=limit,
                        filter={**scope, "odd": True},
                        idf_filter=scope,
                        with_payload=with_payload,
                    )
                    found.append(exact(hits) if with_payload else [h[2:] for h in exact(hits)])
    await store.close()
    return found


async def test_one_idf_schedule_matches_the_two_batch_plan(tmp_path: Path) -> None:
    points = corpus(3, 400)
    ours = await answers(QdrantEdgeStore(tmp_path / "ours"), points)
    theirs = await answers(TwoBatchEdgeStore(tmp_path / "theirs"), points)
    assert ours == theirs
    assert sum(1 for hits in ours if hits) > len(ours) // 2
