"""Where a recall's time goes: the same queries at each layer of the read path, so each layer's
share is the difference between two neighbours (gateway → memory HTTP → recall in process →
query embedding and engine), and the ratio of the gateway to exact numpy over the agent's vectors.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from engram_embedders import Embedder, Embeddings, Provenance
from engram_memory.adapters.vectors import KEYWORD_INDEXES, MemoryVectors
from engram_memory.domain.selection import Selection
from engram_memory.service.recall import Recall
from engram_vectors import HybridHit, QdrantEdgeStore, SparseVector
from engram_vectors.ranking import Mode
from tests.support.internal import internal_headers

COLLECTION = "memories"
MODES: tuple[Mode, ...] = ("hybrid", "dense")


def milliseconds(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/mean of samples in seconds, in milliseconds."""
    arr = np.array(samples) * 1000
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 2),
        "p95_ms": round(float(np.percentile(arr, 95)), 2),
        "mean_ms": round(float(arr.mean()), 2),
        "n": len(samples),
    }


def memory_recalls(
    url: str, agents: list[dict[str, str]], queries: list[str], count: int, mode: str
) -> list[float]:
    """Sequential recalls straight to the memory service's internal API, as the gateway sends
    them (the gateway's own share is the difference)."""
    rng = random.Random(7)
    samples = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for n in range(count + 10):
            owner = rng.choice(agents)
            started = time.perf_counter()
            response = client.post(
                f"/internal/v1/agents/{owner['agent_id']}/recall",
                json={"query": rng.choice(queries), "mode": mode},
                headers=internal_headers(owner["tenant_id"]),
            )
            took = time.perf_counter() - started
            assert response.status_code == 200, response.text
            if n >= 10:
                samples.append(took)
    return samples


class TimedEmbedder:
    """The service's embedder, with how long the last embed took."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.last = 0.0

    @property
    def provenance(self) -> Provenance:
        return self.inner.provenance

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        started = time.perf_counter()
        found = await self.inner.embed(texts)
        self.last = time.perf_counter() - started
        return found

    async def embed_queries(self, texts: Sequence[str]) -> Embeddings:
        """Recall embeds its query as a query (an asymmetric model adds its instruction)."""
        started = time.perf_counter()
        found = await self.inner.embed_queries(texts)
        self.last = time.perf_counter() - started
        return found

    async def aclose(self) -> None:
        """The embedder is the caller's: it closes it."""


class TimedPoints(MemoryVectors):
    """The service's collection, with how long the last candidate search took."""

    last = 0.0

    async def candidates(
        self,
        selection: Selection,
        vector: Sequence[float],
        sparse: SparseVector | None,
        limit: int,
        *,
        fingerprint: str,
        **more: bool,
    ) -> list[HybridHit]:
        started = time.perf_counter()
        found = await super().candidates(
            selection, vector, sparse, limit, fingerprint=fingerprint, **more
        )
        self.last = time.perf_counter() - started
        return found

    async def hit_payloads(self, hits: Sequence[HybridHit]) -> dict[str, HybridHit]:
        started = time.perf_counter()
        found = await super().hit_payloads(hits)
        self.last += time.perf_counter() - started
        return found


async def in_process_stages(
    directory: Path,
    embedder: Embedder,
    agents: list[dict[str, str]],
    queries: list[str],
    count: int,
    encode: Callable[[dict[str, Any]], bytes],
) -> dict[str, Any]:
    """The memory service's Recall in this process over the service's collection, per mode:
    the whole call, query embedding, the engine's candidate search, the rest (ranking, floor,
    shaping hits), and encoding the answer as the route does."""
    store = QdrantEdgeStore(directory, keyword_indexes=KEYWORD_INDEXES)
    points = TimedPoints(store, COLLECTION)
    timed = TimedEmbedder(embedder)
    await points.open(384, embedder.provenance.fingerprint)
    recall = Recall(timed, points)
    result: dict[str, Any] = {}
    try:
        for mode in MODES:
            rng = random.Random(11)
            stages: dict[str, list[float]] = {
                k: [] for k in ("recall", "embed", "engine", "rank_and_shape", "encode")
            }
            for n in range(count + 5):
                owner = rng.choice(agents)
                started = time.perf_counter()
                found = await recall.recall(
                    owner["tenant_id"], owner["agent_id"], rng.choice(queries), 5, mode=mode
                )
                took = time.perf_counter() - started
                encoded = time.perf_counter()
                encode({"results": found.results, "mode": found.mode, "floor": found.floor})
                encoded = time.perf_counter() - encoded
                if n >= 5:
                    stages["recall"].append(took)
                    stages["embed"].append(timed.last)
                    stages["engine"].append(points.last)
                    stages["rank_and_shape"].append(took - timed.last - points.last)
                    stages["encode"].append(encoded)
            result[mode] = {name: milliseconds(samples) for name, samples in stages.items()}
    finally:
        await store.close()
    return result


def recall_answer(body: dict[str, Any]) -> bytes:
    """The answer's bytes as the memory route makes them: its own encoder where it has one
    (in `api.lean`, or in `api.routes` before it), else (a checkout before either)
    jsonable_encoder, then json.dumps."""
    import importlib

    for module in ("engram_memory.api.lean", "engram_memory.api.routes"):
        try:
            own = getattr(importlib.import_module(module), "recall_answer", None)
        except ImportError:
            continue
        if own is not None:
            encoded: bytes = own(body)
            return encoded
    from fastapi.encoders import jsonable_encoder

    return json.dumps(jsonable_encoder(body)).encode()


def breakdown(result: dict[str, Any]) -> dict[str, Any]:
    """Each layer's p50/p95 share per mode (differences of neighbouring layers), and the
    gateway's p95 as a ratio of exact numpy search plus query embedding."""
    floor = result["numpy_exact"]["p95_ms"]
    shares: dict[str, Any] = {}
    for mode in MODES:
        gateway = result["gateway"][mode]
        memory = result["memory_http"][mode]
        inner = result["in_process"][mode]
        shares[mode] = {
            "gateway_p95_ms": gateway["p95_ms"],
            "ratio_to_numpy_exact_p95": round(gateway["p95_ms"] / floor, 2),
            "stages_p50_ms": {
                "gateway_auth_agent_and_hop": round(gateway["p50_ms"] - memory["p50_ms"], 2),
                "memory_http_parse_and_encode": round(
                    memory["p50_ms"] - inner["recall"]["p50_ms"], 2
                ),
                "query_embedding": inner["embed"]["p50_ms"],
                "engine_dense_and_lexical": inner["engine"]["p50_ms"],
                "rank_floor_and_shape": inner["rank_and_shape"]["p50_ms"],
                "encode_answer": inner["encode"]["p50_ms"],
            },
        }
    return shares
