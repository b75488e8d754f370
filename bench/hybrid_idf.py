"""What restricting hybrid_search's IDF to a tenant+agent costs on the embedded engine.

Run: python bench/hybrid_idf.py [--points 100000] [--per-agent 1000] [--queries 400]
Points carry 384-d vectors and ~20 Zipf-distributed terms, 1,000 per agent and 10 agents per
tenant; every query filters by tenant and agent (keyword-indexed). Each query runs back to back,
in rotating order, with idf_filter=tenant+agent, with idf_filter=None (the adapter's live
whole-collection corpus), and with the engine's own global statistics (what idf_filter=None would
cost without a corpus filter; they go stale after deletes), before and after optimize() builds the
HNSW index. Dense-only hybrid_search and search() are timed alongside for reference.
Prints JSON; writes bench-results/hybrid_idf.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as edge

from engram_vectors import QdrantEdgeStore
from engram_vectors.hybrid import EngineQuery, LexicalQuery

DIM = 384
VOCABULARY = 30_000
TERMS_PER_POINT = 20
AGENTS_PER_TENANT = 10
LIMIT = 10


class GlobalIdfToggle(QdrantEdgeStore):
    """The edge adapter, able to send a whole-collection lexical query without a corpus filter."""

    engine_global_idf = False

    def _request(self, query: EngineQuery) -> edge.QueryRequest:  # type: ignore[override]
        request = QdrantEdgeStore._request(query)
        if not (self.engine_global_idf and isinstance(query, LexicalQuery)):
            return request
        if query.idf_conditions:
            return request
        return edge.QueryRequest(
            limit=request.limit,
            query=request.query,
            filter=request.filter,
            with_payload=request.with_payload,
            with_vector=False,
        )


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = np.asarray(samples) * 1000
    return {
        "p50_ms": round(float(np.percentile(ordered, 50)), 3),
        "p95_ms": round(float(np.percentile(ordered, 95)), 3),
        "p99_ms": round(float(np.percentile(ordered, 99)), 3),
    }


def zipf_terms(rng: np.random.Generator, count: int) -> np.ndarray[Any, Any]:
    """Term ids drawn with Zipf-like frequencies over the vocabulary (rank 1 most common)."""
    weights = 1.0 / np.arange(1, VOCABULARY + 1)
    return rng.choice(VOCABULARY, size=count, p=weights / weights.sum())


async def load(store: Any, points: int, per_agent: int, rng: np.random.Generator) -> list[Any]:
    """Upsert the corpus; return each point's terms so queries can share some of them."""
    from engram_vectors import Point, SparseVector

    await store.ensure_collection("bench", DIM, "bench-fingerprint", lexical="bench-lexical")
    kept = []
    for start in range(0, points, 1000):
        vectors = rng.normal(size=(1000, DIM)).astype(np.float32)
        batch = []
        for offset in range(min(1000, points - start)):
            n = start + offset
            agent = n // per_agent
            terms = np.unique(zipf_terms(rng, TERMS_PER_POINT))
            weights = rng.uniform(0.2, 3.0, size=len(terms))
            kept.append(terms)
            payload = {"tenant_id": f"t{agent // AGENTS_PER_TENANT}", "agent_id": f"a{agent}"}
            sparse = SparseVector(tuple(terms.tolist()), tuple(weights.tolist()))
            batch.append(Point(f"p{n}", vectors[offset], payload, sparse))
        await store.upsert("bench", batch)
    return kept


async def measure(
    store: GlobalIdfToggle, points: int, per_agent: int, queries: int, kept: list[Any], seed: int
) -> dict[str, Any]:
    """Latency of each variant over the same queries."""
    from engram_vectors import SparseVector

    rng = np.random.default_rng(seed)
    variants = {
        "hybrid_idf_tenant_agent": (False, True),
        "hybrid_idf_whole_collection": (False, False),
        "hybrid_idf_engine_global": (True, False),
    }
    samples: dict[str, list[float]] = {
        **{label: [] for label in variants},
        "hybrid_dense_only": [],
        "search_dense": [],
    }
    for n in range(queries + 20):
        point = int(rng.integers(points))
        agent = point // per_agent
        scope = {"tenant_id": f"t{agent // AGENTS_PER_TENANT}", "agent_id": f"a{agent}"}
        own = rng.choice(kept[point], size=min(3, len(kept[point])), replace=False)
        terms = np.unique(np.concatenate([own, zipf_terms(rng, 2)]))
        sparse = SparseVector(tuple(terms.tolist()), tuple([1.0] * len(terms)))
        vector = rng.normal(size=DIM).astype(np.float32)
        labels = list(variants)
        for label in labels[n % 3 :] + labels[: n % 3]:
            store.engine_global_idf, scoped = variants[label]
            started = time.perf_counter()
            await store.hybrid_search(
                "bench",
                vector=vector,
                sparse=sparse,
                limit=LIMIT,
                filter=scope,
                idf_filter=scope if scoped else None,
            )
            if n >= 20:
                samples[label].append(time.perf_counter() - started)
        store.engine_global_idf = False
        started = time.perf_counter()
        await store.hybrid_search("bench", vector=vector, sparse=None, limit=LIMIT, filter=scope)
        if n >= 20:
            samples["hybrid_dense_only"].append(time.perf_counter() - started)
        started = time.perf_counter()
        await store.search("bench", vector, LIMIT, scope)
        if n >= 20:
            samples["search_dense"].append(time.perf_counter() - started)
    result: dict[str, Any] = {label: percentiles(values) for label, values in samples.items()}
    tenant = result["hybrid_idf_tenant_agent"]
    for baseline in ("hybrid_idf_whole_collection", "hybrid_idf_engine_global"):
        result[f"tenant_agent_minus_{baseline.removeprefix('hybrid_idf_')}_ms"] = {
            key.removesuffix("_ms"): round(tenant[key] - result[baseline][key], 3)
            for key in ("p50_ms", "p95_ms")
        }
    return result


async def run(points: int, per_agent: int, queries: int, directory: Path) -> dict[str, Any]:
    store = GlobalIdfToggle(directory / "edge")
    rng = np.random.default_rng(5)
    started = time.perf_counter()
    kept = await load(store, points, per_agent, rng)
    result: dict[str, Any] = {
        "bench": "hybrid_idf",
        "points": points,
        "points_per_agent": per_agent,
        "terms_per_point": TERMS_PER_POINT,
        "limit": LIMIT,
        "load_seconds": round(time.perf_counter() - started, 1),
        "before_optimize": await measure(store, points, per_agent, queries, kept, seed=8),
    }
    started = time.perf_counter()
    await store.optimize("bench")
    result["optimize_seconds"] = round(time.perf_counter() - started, 1)
    result["optimized"] = await measure(store, points, per_agent, queries, kept, seed=9)
    await store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--per-agent", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        result = asyncio.run(run(args.points, args.per_agent, args.queries, Path(scratch)))
    print(json.dumps(result, indent=2), flush=True)
    target = Path(__file__).resolve().parent.parent / "bench-results" / "hybrid_idf.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(result, indent=2))
    print(f"wrote {target}", flush=True)


if __name__ == "__main__":
    main()
