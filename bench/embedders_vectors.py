"""Benchmarks for libs/embedders and libs/vectors: MiniLM throughput, vector search latency.

Run: python bench/embedders_vectors.py [--points 10000] [--queries 200]
Each MiniLM measurement runs in its own process so load time and RSS are not shared.
Prints one JSON object per measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

WORDS = (
    "carrier invoice shipment memory agent record fact policy insurance tenant quarterly "
    "deadline warehouse route driver contract renewal claim customer support ticket rug cat "
    "kitten mat filing tax report payment overdue delivery schedule update status archive"
).split()


def rss_mib() -> float:
    """Resident set size of this process, from /proc."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sentences(count: int, seed: int = 1) -> list[str]:
    """Sentences of 8-24 words, the length of typical memories."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(8, 24))) for _ in range(count)]


def bench_minilm(threads: int, count: int) -> dict[str, Any]:
    """Load time, sentences per second and RSS for one thread setting, in this process."""
    from engram_embedders import MiniLMEmbedder

    before = rss_mib()
    embedder = MiniLMEmbedder(threads=threads)
    started = time.perf_counter()
    embedder.load()
    load_seconds = time.perf_counter() - started
    embedder.embed_sync(sentences(32, seed=9))
    texts = sentences(count)
    started = time.perf_counter()
    embedder.embed_sync(texts)
    elapsed = time.perf_counter() - started
    started = time.perf_counter()
    for text in texts[:100]:
        embedder.embed_sync([text])
    single_ms = (time.perf_counter() - started) / 100 * 1000
    return {
        "bench": "minilm",
        "threads": threads,
        "sentences": count,
        "sentences_per_second": round(count / elapsed, 1),
        "single_sentence_ms": round(single_ms, 2),
        "load_seconds": round(load_seconds, 3),
        "rss_mib_before_load": round(before, 1),
        "rss_mib_after": round(rss_mib(), 1),
    }


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = np.asarray(samples) * 1000
    return {
        "p50_ms": round(float(np.percentile(ordered, 50)), 3),
        "p95_ms": round(float(np.percentile(ordered, 95)), 3),
    }


async def bench_store(kind: str, points: int, queries: int, directory: Path) -> dict[str, Any]:
    """Upsert time and filtered/unfiltered search latency for one adapter."""
    from engram_vectors import ExactNumpyStore, Point, QdrantClientStore, QdrantEdgeStore
    from engram_vectors.base import BaseVectorStore

    store: BaseVectorStore
    if kind == "numpy":
        store = ExactNumpyStore()
    elif kind.startswith("edge"):
        store = QdrantEdgeStore(directory / kind)
    else:
        store = QdrantClientStore(location=":memory:")
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(points, 384)).astype(np.float32)
    probes = rng.normal(size=(queries, 384)).astype(np.float32)
    await store.ensure_collection("bench", 384, "bench-fingerprint")
    started = time.perf_counter()
    batch = 500
    for start in range(0, points, batch):
        await store.upsert(
            "bench",
            [
                Point(f"p{i}", vectors[i], {"tenant_id": f"t{i % 10}", "agent_id": f"a{i % 50}"})
                for i in range(start, min(points, start + batch))
            ],
        )
    upsert_seconds = time.perf_counter() - started
    result: dict[str, Any] = {
        "bench": "vectors",
        "adapter": kind,
        "points": points,
        "upsert_points_per_second": round(points / upsert_seconds, 1),
    }
    if kind == "edge-optimized":
        assert isinstance(store, QdrantEdgeStore)
        started = time.perf_counter()
        await store.optimize("bench")
        result["optimize_seconds"] = round(time.perf_counter() - started, 2)
    for label, search_filter in (
        ("unfiltered", None),
        ("tenant", {"tenant_id": "t3"}),
        ("tenant_agent", {"tenant_id": "t3", "agent_id": "a13"}),
    ):
        samples = []
        for probe in probes:
            started = time.perf_counter()
            await store.search("bench", probe, top_k=10, filter=search_filter)
            samples.append(time.perf_counter() - started)
        result[label] = percentiles(samples)
    await store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sentences", type=int, default=1024)
    parser.add_argument("--minilm-threads", type=int, default=0, help="internal: one measurement")
    parser.add_argument("--skip-minilm", action="store_true")
    parser.add_argument("--adapters", default="numpy,edge,edge-optimized,qdrant-memory")
    args = parser.parse_args()
    if args.minilm_threads:
        print(json.dumps(bench_minilm(args.minilm_threads, args.sentences)), flush=True)
        return
    results: dict[str, list[Any]] = {"minilm": [], "stores": []}
    if not args.skip_minilm:
        for threads in (1, 2):
            command = [sys.executable, __file__, "--minilm-threads", str(threads)]
            command += ["--sentences", str(args.sentences)]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            print(out.strip(), flush=True)
            results["minilm"].append(json.loads(out.strip().splitlines()[-1]))
    with tempfile.TemporaryDirectory() as scratch:
        for kind in args.adapters.split(","):
            outcome = asyncio.run(bench_store(kind, args.points, args.queries, Path(scratch)))
            print(json.dumps(outcome), flush=True)
            results["stores"].append(outcome)
    target = Path(__file__).resolve().parent.parent / "bench-results" / "embedders_vectors.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(results, indent=2))
    print(f"wrote {target}", flush=True)


if __name__ == "__main__":
    main()
