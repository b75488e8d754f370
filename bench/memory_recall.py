"""Memory benchmark: recall latency through the gateway, store→recallable, write throughput.

Run: python bench/memory_recall.py [--sizes 10000,100000] [--queries 200] [--steady-seconds 20]
Needs KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI (`python -m bench` provides them).

1. Recall p50/p95 at each size, memories spread over 10 tenants x 10 agents (--agents: over
   fewer; 1 is one agent holding them all), MiniLM query embedding included: through the gateway
   (memory service on the embedded Qdrant engine), and side by side in this process with
   qdrant-client local mode and exact numpy search over the agent's own vectors. Hybrid and
   dense are each timed at every layer: the gateway, the memory service's internal API, and its
   Recall in this process split into query embedding, the engine's search, ranking, and
   encoding the answer (bench/_recall_stages.py); `breakdown` gives each layer's share and the
   gateway's p95 as a ratio of exact numpy's. Stored vectors are MiniLM vectors of a sentence pool plus noise (embedding
   100k distinct texts would take ~10 minutes on 2 cores); queries are embedded for real.
2. Store→recallable: POSTs at a steady 50/s through gateway → memory → embedding → memory; the
   latency is from the POST to `memory.stored` on Kafka (published once row and point are durable).
3. Write throughput, as a ratio of the standalone MiniLM throughput on the same texts, one POST
   per memory and `:batch` POSTs of 50: sustained (a closed loop keeping at most --window
   memories posted and not yet stored, so intake runs alongside the embedder; the rate is taken
   while both run), and a burst (everything posted at once, then drained; intake crowds the
   embedder at the start and nothing is left for it at the end).

Writes bench-results/memory_recall.json and memory_recall.png (when matplotlib is installed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._cpus import infra_ports, listening_pids  # noqa: E402
from bench._hops import Arrivals, hop_times, hops_listener, listen  # noqa: E402
from bench._key_clients import KeyClients, bearer_client  # noqa: E402
from bench._load import LeanClient  # noqa: E402
from bench._memory_points import write_collection  # noqa: E402
from bench._recall_stages import (  # noqa: E402
    MODES,
    breakdown,
    in_process_stages,
    memory_recalls,
    recall_answer,
)
from engram_devstack import free_port  # noqa: E402
from engram_devstack.cpus import keep_on, model_env, others  # noqa: E402
from engram_embedders import MiniLMEmbedder  # noqa: E402
from engram_events.content import content_sha256  # noqa: E402
from engram_memory.adapters.rows import memory_row  # noqa: E402
from engram_vectors import Point, QdrantClientStore, QdrantEdgeStore  # noqa: E402
from tests.support.services import ServiceProcess  # noqa: E402
from tests.support.tenants import create_tenant  # noqa: E402

RESULTS = ROOT / "bench-results"
COLLECTION = "memories"
TENANTS = 10
AGENTS_PER_TENANT = 10
BATCH = 50
"""Memories per `:batch` request in the batched throughput run."""
SUBJECTS = (
    "the user|our team|the customer|the supplier|the carrier|the driver|finance|support".split("|")
)
VERBS = "prefers|reported|asked about|scheduled|cancelled|renewed|paid|shipped|reviewed".split("|")
OBJECTS = (
    "the quarterly invoice|a window seat|the Rotterdam warehouse|the late delivery|"
    "the insurance claim|a discount|the new contract|the on-call rotation|the tax filing|"
    "the data export|the standing desk|oat milk|the Lisbon office|the audit report"
).split("|")
WHEN = "on Monday|last week|in March|every spring|before noon|after the release|yesterday".split(
    "|"
)


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50/p95/mean in milliseconds."""
    arr = np.array(samples) * 1000
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 2),
        "p95_ms": round(float(np.percentile(arr, 95)), 2),
        "mean_ms": round(float(arr.mean()), 2),
        "n": len(samples),
    }


def sentences(count: int, seed: int) -> list[str]:
    """Memory-like sentences from a small grammar, distinct within and across seeds (the memory
    service stores a repeated sentence of one agent once)."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(WHEN)} "
        f"(note {seed}-{n}-{rng.randint(1, 99999)})"
        for n in range(count)
    ]


def base_env() -> dict[str, str]:
    """A fresh topic/database prefix on the runner's broker and database; tracing off. A
    PYTHONPATH given to the bench comes first (another checkout's packages, for before/after)."""
    tag = f"b{uuid.uuid4().hex[:8]}"
    return {
        "KAFKA_BOOTSTRAP_SERVERS": os.environ["KAFKA_BOOTSTRAP_SERVERS"],
        "MONGODB_URI": os.environ["MONGODB_URI"],
        "ENGRAM_TOPIC_PREFIX": f"{tag}.",
        "ENGRAM_DATABASE_PREFIX": f"{tag}_",
        "ENGRAM_LOG_LEVEL": "WARNING",
        "ENGRAM_TRACING": "false",
        "ENGRAM_EMBEDDING_EMBEDDER": "minilm",
        "ENGRAM_MEMORY_EMBEDDER": "minilm",
        "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p),
    }


def tenants_and_agents(
    gateway: ServiceProcess, env: dict[str, str], count: int = TENANTS * AGENTS_PER_TENANT
) -> list[dict[str, str]]:
    """`count` agents over up to 10 tenants (10 x 10 for 100), created the way users do; tenant
    ids read from the registry."""
    from pymongo import MongoClient

    registry: Any = MongoClient(env["MONGODB_URI"])[f"{env['ENGRAM_DATABASE_PREFIX']}gateway"]
    agents = []
    tenants = min(TENANTS, count)
    for t in range(tenants):
        key = create_tenant(env, f"bench{t}")
        with httpx.Client(base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}) as c:
            for _ in range(count // tenants + (1 if t < count % tenants else 0)):
                agent_id = c.post("/v1/agents", json={}).json()["agent_id"]
                tenant_id = registry.agents.find_one({"_id": agent_id})["tenant_id"]
                agents.append({"key": key, "tenant_id": tenant_id, "agent_id": agent_id})
    return agents


def synthetic_points(
    size: int,
    agents: list[dict[str, str]],
    pool: np.ndarray,
    texts: list[str],
    seed: int,
    provenance: dict[str, Any],
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Unit vectors near pool vectors, and the row of each point (round-robin over agents)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(pool), size)
    vectors = pool[picks] + rng.normal(0, 0.02, (size, pool.shape[1])).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    now = datetime.now(UTC)
    rows = []
    for i in range(size):
        owner = agents[i % len(agents)]
        memory_id = f"mem_bench_{i:07d}"
        rows.append(
            {
                "_id": f"{owner['tenant_id']}:{memory_id}",
                "memory_id": memory_id,
                "tenant_id": owner["tenant_id"],
                "agent_id": owner["agent_id"],
                "type": "conversation",
                "status": "active",
                "content": texts[int(picks[i])],
                "content_sha256": content_sha256(texts[int(picks[i])]),
                "derived_from": [],
                "provenance": provenance,
                "created_at": now,
                "updated_at": now,
            }
        )
    return vectors.astype(np.float32), rows


def payload(row: dict[str, Any]) -> dict[str, Any]:
    """The payload the in-process alternatives search (ids, status, and what recall returns)."""
    kept = {k: row[k] for k in ("tenant_id", "agent_id", "memory_id", "type", "status", "content")}
    return {**kept, "provenance": row["provenance"], "created_at": row["created_at"].isoformat()}


def load_rows(env: dict[str, str], rows: list[dict[str, Any]]) -> float:
    """Insert the memory service's rows in batches; returns seconds taken."""
    from pymongo import MongoClient

    started = time.perf_counter()
    database: Any = MongoClient(env["MONGODB_URI"])[f"{env['ENGRAM_DATABASE_PREFIX']}memory"]
    collection = database.memories
    for start in range(0, len(rows), 5000):
        collection.insert_many(rows[start : start + 5000], ordered=False)
    return time.perf_counter() - started


def gateway_recalls(
    gateway: ServiceProcess,
    agents: list[dict[str, str]],
    queries: list[str],
    count: int,
    mode: str = "hybrid",
) -> list[float]:
    """Sequential recalls through the gateway for random (tenant, agent) pairs."""
    rng = random.Random(7)
    clients = KeyClients(bearer_client(gateway.url))
    samples = []
    try:
        for n in range(count + 10):
            owner = rng.choice(agents)
            client = clients(owner["key"])
            started = time.perf_counter()
            response = client.post(
                f"/v1/agents/{owner['agent_id']}/recall",
                json={"query": rng.choice(queries), "mode": mode},
            )
            took = time.perf_counter() - started
            assert response.status_code == 200, response.text
            if n >= 10:
                samples.append(took)
    finally:
        clients.close()
    return samples


def gateway_agent_reads(
    gateway: ServiceProcess, agents: list[dict[str, str]], count: int
) -> list[float]:
    """GET /v1/agents/{id}: the gateway's own share of a recall (key check + agent lookup),
    over kept-alive connections as the recalls use (a new client per call measured its setup)."""
    rng = random.Random(8)
    samples = []
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        for _ in range(count):
            owner = rng.choice(agents)
            headers = {"Authorization": f"Bearer {owner['key']}"}
            started = time.perf_counter()
            response = client.get(f"/v1/agents/{owner['agent_id']}", headers=headers)
            samples.append(time.perf_counter() - started)
            assert response.status_code == 200
    return samples


async def in_process(
    kind: str,
    embedder: MiniLMEmbedder,
    vectors: np.ndarray,
    rows: list[dict[str, Any]],
    agents: list[dict[str, str]],
    queries: list[str],
    count: int,
    directory: Path,
) -> dict[str, Any]:
    """MiniLM query embedding + search with tenant/agent predicates, in this process."""
    rng = random.Random(11)
    started = time.perf_counter()
    if kind == "numpy_exact":
        by_agent: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            by_agent.setdefault(row["agent_id"], []).append(i)
        matrices = {a: vectors[idx] for a, idx in by_agent.items()}

        async def search(owner: dict[str, str], q: np.ndarray) -> Any:
            scores = matrices[owner["agent_id"]] @ q
            top = np.argpartition(-scores, 5)[:5]
            return top[np.argsort(-scores[top])]

    else:
        if kind == "qdrant_client_local":
            store: Any = QdrantClientStore(location=":memory:")
            await store.ensure_collection(COLLECTION, vectors.shape[1], "bench")
            for start in range(0, len(rows), 2048):
                chunk = range(start, min(start + 2048, len(rows)))
                await store.upsert(
                    COLLECTION,
                    [Point(rows[i]["memory_id"], vectors[i], payload(rows[i])) for i in chunk],
                )
        else:
            store = QdrantEdgeStore(directory)

        async def search(owner: dict[str, str], q: np.ndarray) -> Any:
            where = {
                "tenant_id": owner["tenant_id"],
                "agent_id": owner["agent_id"],
                "status": ["active"],
            }
            return await store.search(COLLECTION, q, 5, filter=where)

    load_seconds = time.perf_counter() - started
    samples = []
    for n in range(count + 5):
        owner = rng.choice(agents)
        t0 = time.perf_counter()
        q = (await embedder.embed([rng.choice(queries)])).vectors[0]
        await search(owner, q)
        if n >= 5:
            samples.append(time.perf_counter() - t0)
    if kind != "numpy_exact":
        await store.close()
    return {**percentiles(samples), "load_seconds": round(load_seconds, 1)}


async def recall_latency(
    size: int, queries: int, pool: np.ndarray, texts: list[str], work: Path, agent_count: int
) -> dict[str, Any]:
    """One size: load, then measure recall at each layer (gateway, memory HTTP, in process) in
    both modes, and the in-process alternatives; the breakdown is the layers' differences."""
    env = base_env()
    directory = work / f"vectors-{size}-{agent_count}"
    memory = ServiceProcess(
        "memory", {**env, "ENGRAM_MEMORY_VECTOR_PATH": str(directory)}, free_port(), work / "logs"
    )
    gateway = ServiceProcess(
        "gateway", {**env, "ENGRAM_GATEWAY_MEMORY_URL": memory.url}, free_port(), work / "logs"
    )
    embedder = MiniLMEmbedder(threads=1)
    questions = sentences(200, seed=99)
    result: dict[str, Any] = {"size": size, "agents": agent_count}
    try:
        gateway.start()
        agents = tenants_and_agents(gateway, env, agent_count)
        provenance = {
            **embedder.provenance.model_dump(),
            "fingerprint": embedder.provenance.fingerprint,
        }
        vectors, rows = synthetic_points(size, agents, pool, texts, size, provenance)
        result["load_rows_seconds"] = round(load_rows(env, rows), 1)
        result["load_edge_seconds"] = round(
            await write_collection(directory, [memory_row(r) for r in rows], vectors, provenance), 1
        )
        memory.start()
        result["gateway"] = {}
        result["memory_http"] = {}
        for mode in MODES:
            result["gateway"][mode] = percentiles(
                gateway_recalls(gateway, agents, questions, queries, mode)
            )
            result["memory_http"][mode] = percentiles(
                memory_recalls(memory.url, agents, questions, queries, mode)
            )
        result["gateway_edge"] = result["gateway"]["hybrid"]
        result["gateway_auth_and_agent_only"] = percentiles(
            gateway_agent_reads(gateway, agents, queries)
        )
    finally:
        memory.stop()
        gateway.stop()
    result["in_process"] = await in_process_stages(
        directory, embedder, agents, questions, queries, recall_answer
    )
    for kind in ("edge_in_process", "qdrant_client_local", "numpy_exact"):
        count = queries if kind != "qdrant_client_local" else min(queries, 50)
        result[kind] = await in_process(
            kind, embedder, vectors, rows, agents, questions, count, directory
        )
    await embedder.aclose()
    result["breakdown"] = breakdown(result)
    print(json.dumps(result), flush=True)
    return result


async def stored_listener(
    env: dict[str, str], seen: dict[str, float], ready: asyncio.Event
) -> None:
    """Record when each `memory.stored` arrives."""

    def note(record: Any, now: float) -> None:
        event = json.loads(record.value)
        if event.get("event_type") == "memory.stored":
            seen[event["payload"]["memory_id"]] = now

    await listen(env, ("engram.memory-outcomes.v1",), note, ready)


async def post_memories(
    gateway: ServiceProcess,
    key: str,
    agent_id: str,
    texts: list[str],
    rate: float | None,
    concurrency: int = 8,
) -> dict[str, float]:
    """POST memories at `rate` per second (None: as fast as `concurrency` allows); send times.

    The lean client keeps the load generator's CPU off the platform's two cores."""
    sent: dict[str, float] = {}
    headers = {"Authorization": f"Bearer {key}"}
    async with LeanClient(gateway.url, headers, connections=concurrency) as client:

        async def one(text: str) -> None:
            t0 = time.perf_counter()
            status, answer = await client.post_json(
                f"/v1/agents/{agent_id}/memories", {"content": text}
            )
            assert status == 202, answer
            sent[answer["memory_id"]] = t0

        if rate is None:
            await asyncio.gather(*(one(t) for t in texts))
        else:
            start = time.perf_counter()
            tasks = []
            for n, text in enumerate(texts):
                await asyncio.sleep(max(0.0, start + n / rate - time.perf_counter()))
                tasks.append(asyncio.create_task(one(text)))
            await asyncio.gather(*tasks)
    return sent


async def post_memory_batches(
    gateway: ServiceProcess,
    key: str,
    agent_id: str,
    texts: list[str],
    size: int,
    concurrency: int = 4,
) -> dict[str, float]:
    """POST memories `size` per request (`:batch`), as fast as `concurrency` allows; send times."""
    sent: dict[str, float] = {}
    headers = {"Authorization": f"Bearer {key}"}
    async with LeanClient(gateway.url, headers, connections=concurrency) as client:

        async def one(chunk: list[str]) -> None:
            t0 = time.perf_counter()
            status, answer = await client.post_json(
                f"/v1/agents/{agent_id}/memories:batch",
                {"memories": [{"content": text} for text in chunk]},
            )
            assert status == 202, answer
            sent.update((a["memory_id"], t0) for a in answer["memories"])

        await asyncio.gather(*(one(texts[i : i + size]) for i in range(0, len(texts), size)))
    return sent


async def wait_stored(sent: dict[str, float], seen: dict[str, float], seconds: float) -> None:
    """Until every sent memory was seen stored, or `seconds` passed (missing ones count as lost)."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline and not set(sent) <= set(seen):  # noqa: ASYNC110
        await asyncio.sleep(0.1)


def burst_rates(sent: dict[str, float], seen: dict[str, float], started: float) -> dict[str, Any]:
    """A burst's writes per second from the first POST to the last `memory.stored` (ramp-up and
    drain included), how many were lost, and where the time went: until the first store, the
    last tenth, and the rate between the 10th and 90th percentile stores."""
    stored = sorted(seen[m] for m in sent if m in seen)
    tenth, ninetieth = stored[len(stored) // 10], stored[len(stored) * 9 // 10]
    return {
        "write_throughput_per_s": round(len(sent) / (stored[-1] - started), 1),
        "lost": len(sent) - len(stored),
        "first_stored_after_s": round(stored[0] - started, 3),
        "last_tenth_took_s": round(stored[-1] - ninetieth, 3),
        "middle_80_percent_per_s": round(
            (len(stored) * 9 // 10 - len(stored) // 10) / max(ninetieth - tenth, 1e-9), 1
        ),
    }


async def sustained_writes(
    gateway: ServiceProcess,
    key: str,
    agent_id: str,
    texts: list[str],
    seen: dict[str, float],
    per_request: int,
    window: int,
    measured: list[str],
) -> dict[str, Any]:
    """Writes kept flowing with at most `window` memories posted and not yet stored, so intake
    (gateway, memory, database) runs alongside the embedder as under a steady load; the rate is
    taken between the `window`-th store and the last store before posting ends, while both run.
    `per_request` 1 is one POST per memory, more is `:batch`. `measured` holds the texts stored
    in that span, for MiniLM alone to be timed on exactly those."""
    sent: dict[str, float] = {}
    text_of: dict[str, str] = {}
    chunks = iter([texts[i : i + per_request] for i in range(0, len(texts), per_request)])
    base, reserved = len(seen), 0
    headers = {"Authorization": f"Bearer {key}"}
    path = f"/v1/agents/{agent_id}/memories" + (":batch" if per_request > 1 else "")
    connections = 4 if per_request > 1 else 8
    async with LeanClient(gateway.url, headers, connections=connections) as client:

        async def worker() -> None:
            nonlocal reserved
            for chunk in chunks:
                while reserved + len(chunk) - (len(seen) - base) > window:  # noqa: ASYNC110
                    await asyncio.sleep(0.005)
                reserved += len(chunk)
                t0 = time.perf_counter()
                if per_request > 1:
                    body: Any = {"memories": [{"content": text} for text in chunk]}
                else:
                    body = {"content": chunk[0]}
                status, answer = await client.post_json(path, body)
                assert status == 202, answer
                for text, accepted in zip(
                    chunk, answer["memories"] if per_request > 1 else [answer], strict=True
                ):
                    sent[accepted["memory_id"]] = t0
                    text_of[accepted["memory_id"]] = text

        await asyncio.gather(*(worker() for _ in range(connections)))
    posting_ended = time.perf_counter()
    await wait_stored(sent, seen, 600)
    stored = sorted(seen[m] for m in sent if m in seen)
    during = [t for t in stored if t <= posting_ended]
    first, last = window, len(during) - 1
    measured[:] = [
        text_of[m] for m in sent if m in seen and during[first] <= seen[m] <= during[last]
    ]
    return {
        "memories": len(texts),
        "per_request": per_request,
        "window": window,
        "write_throughput_per_s": round(
            (last - first) / max(during[last] - during[first], 1e-9), 1
        ),
        "lost": len(sent) - len(stored),
    }


async def standalone_rate(texts: list[str], passes: int = 3) -> float:
    """MiniLM alone on these texts, 64 per call on one thread as the service runs it: the median
    of `passes` (this machine's speed drifts by several percent from one minute to the next)."""
    embedder = MiniLMEmbedder(threads=1)
    await embedder.embed(texts[:8])
    rates = []
    for _ in range(passes):
        started = time.perf_counter()
        for start in range(0, len(texts), 64):
            await embedder.embed(texts[start : start + 64])
        rates.append(len(texts) / (time.perf_counter() - started))
    await embedder.aclose()
    return round(sorted(rates)[len(rates) // 2], 1)


def write_services(
    env: dict[str, str], work: Path, name: str
) -> tuple[ServiceProcess, ServiceProcess, ServiceProcess]:
    """Embedding, memory and a gateway in front of it, with their own vector directory."""
    embedding = ServiceProcess("embedding", env, free_port(), work / "logs")
    memory = ServiceProcess(
        "memory",
        {**env, "ENGRAM_MEMORY_VECTOR_PATH": str(work / f"vectors-{name}")},
        free_port(),
        work / "logs",
    )
    gateway = ServiceProcess(
        "gateway", {**env, "ENGRAM_GATEWAY_MEMORY_URL": memory.url}, free_port(), work / "logs"
    )
    return embedding, memory, gateway


async def new_agent(gateway: ServiceProcess, env: dict[str, str], tenant: str) -> tuple[str, str]:
    """A fresh tenant's key and one agent of it."""
    key = create_tenant(env, tenant)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers) as c:
        agent_id = (await c.post("/v1/agents", json={})).json()["agent_id"]
    return key, agent_id


@asynccontextmanager
async def write_platform(
    work: Path,
    name: str,
    seen: dict[str, float],
    extra_env: dict[str, str] | None = None,
    started: list[ServiceProcess] | None = None,
) -> AsyncIterator[tuple[ServiceProcess, str, str]]:
    """Embedding, memory and a gateway on fresh topics and databases, `memory.stored` recorded
    into `seen`, and one new tenant's agent warmed up with 20 memories: (gateway, key, agent);
    `started` receives the three processes (for a caller that reads their CPU)."""
    env = base_env()
    services = write_services({**env, **(extra_env or {})}, work, name)
    if started is not None:
        started.extend(services)
    ready = asyncio.Event()
    listener = asyncio.create_task(stored_listener(env, seen, ready))
    try:
        for process in services:
            process.start()
        await ready.wait()
        gateway = services[-1]
        key, agent_id = await new_agent(gateway, env, f"writes-{name}")
        warm = await post_memories(gateway, key, agent_id, sentences(20, seed=1), rate=10)
        await wait_stored(warm, seen, 60)
        yield gateway, key, agent_id
    finally:
        listener.cancel()
        for process in reversed(services):
            process.stop()


async def write_path(
    steady_seconds: int, burst: int, sustained: int, window: int, work: Path
) -> dict[str, Any]:
    """Store→recallable at 50 writes/s; sustained throughput (closed loop) and bursts, one POST
    per memory and `:batch`, each against the standalone embedder on its own texts; then the
    sustained runs again with the model on a CPU of its own."""
    seen: dict[str, float] = {}
    kinds = {"per_post": 1, "batched": BATCH}
    modes = (("sustained", sustained), ("burst", burst), ("model_core", sustained))
    texts = {
        (mode, kind): sentences(size, seed=seed)
        for seed, (mode, size, kind) in enumerate(
            [(m, n, k) for m, n in modes for k in kinds], start=3
        )
    }
    measured: dict[tuple[str, str], list[str]] = {
        (mode, kind): [] for mode in ("sustained", "model_core") for kind in kinds
    }
    result: dict[str, Any] = {"sustained": {}, "burst": {}}
    async with write_platform(work, "shared", seen) as (gateway, key, agent_id):
        arrivals: Arrivals = {}
        listening = asyncio.Event()
        hops = asyncio.create_task(hops_listener(gateway.env, arrivals, listening))
        await listening.wait()
        steady = await post_memories(
            gateway, key, agent_id, sentences(50 * steady_seconds, seed=2), rate=50
        )
        await wait_stored(steady, seen, 120)
        hops.cancel()
        latencies = [seen[m] - t for m, t in steady.items() if m in seen]
        result["store_to_recallable_at_50_per_s"] = {
            **percentiles(latencies),
            "lost": len(steady) - len(latencies),
            "hops": {
                name: percentiles(times)
                for name, times in hop_times(steady, seen, arrivals).items()
            },
        }
        print(f"[bench] store to recallable at 50/s: {result['store_to_recallable_at_50_per_s']}")
        for kind, size in kinds.items():
            result["sustained"][kind] = await sustained_writes(
                gateway, key, agent_id, texts["sustained", kind], seen, size, window,
                measured["sustained", kind],
            )  # fmt: skip
            print(f"[bench] sustained {kind}: {result['sustained'][kind]}", flush=True)
        for kind, size in kinds.items():
            started = time.perf_counter()
            if size > 1:
                sent = await post_memory_batches(gateway, key, agent_id, texts["burst", kind], size)
            else:
                sent = await post_memories(gateway, key, agent_id, texts["burst", kind], None)
            await wait_stored(sent, seen, 600)
            result["burst"][kind] = burst_rates(sent, seen, started)
            print(f"[bench] burst {kind}: {result['burst'][kind]}", flush=True)
    model_core = await model_core_writes(work, texts, measured, kinds, seen, window)
    if model_core is not None:
        result["model_core"] = model_core
    for (mode, kind), theirs in texts.items():
        entry = result.get(mode, {}).get(kind)
        if entry is None:
            continue
        entry["standalone_minilm_per_s"] = await standalone_rate(
            measured.get((mode, kind)) or theirs
        )
        entry["throughput_ratio"] = round(
            entry["write_throughput_per_s"] / entry["standalone_minilm_per_s"], 3
        )
    result["batch_size"] = BATCH
    print(json.dumps(result), flush=True)
    return result


async def model_core_writes(
    work: Path,
    texts: dict[tuple[str, str], list[str]],
    measured: dict[tuple[str, str], list[str]],
    kinds: dict[str, int],
    seen: dict[str, float],
    window: int,
) -> dict[str, Any] | None:
    """The sustained runs as `run --model-cpus` deploys them: the model's process on the last
    CPU, and the broker, the database, the other services and this client on the rest. Fresh
    topics and databases, as the shared-core runs had."""
    mine = frozenset(os.sched_getaffinity(0))
    if len(mine) < 2:
        return None
    model = frozenset({max(mine)})
    rest = others(model)
    infra = listening_pids(infra_ports(os.environ))
    keep_on(rest, [os.getpid(), *infra])
    result: dict[str, Any] = {"model_cpus": sorted(model), "others": sorted(rest)}
    try:
        async with write_platform(work, "model-core", seen, model_env(model)) as platform:
            for kind, size in kinds.items():
                result[kind] = await sustained_writes(
                    *platform, texts["model_core", kind], seen, size, window,
                    measured["model_core", kind],
                )  # fmt: skip
                print(
                    f"[bench] sustained, model on its own CPU, {kind}: {result[kind]}", flush=True
                )
    finally:
        keep_on(mine, [os.getpid(), *infra])
    return result


def plot(results: dict[str, Any], target: Path) -> bool:
    """Recall p50/p95 per engine and size, and write throughput against the standalone
    embedder; False when matplotlib is not installed or nothing was measured."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    writes = results.get("writes")
    panels = len(results["recall"]) + (1 if writes else 0)
    if not panels:
        return False
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4), squeeze=False)
    for ax, entry in zip(axes[0], results["recall"], strict=False):
        plot_recall(ax, entry)
    if writes:
        plot_writes(axes[0][-1], writes)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    return True


def plot_recall(ax: Any, entry: dict[str, Any]) -> None:
    """One size's recall latency per engine, log scale, with the 25 ms target."""
    kinds = ["gateway_edge", "edge_in_process", "qdrant_client_local", "numpy_exact"]
    x = np.arange(len(kinds))
    ax.bar(x - 0.2, [entry[k]["p50_ms"] for k in kinds], 0.4, label="p50")
    ax.bar(x + 0.2, [entry[k]["p95_ms"] for k in kinds], 0.4, label="p95")
    ax.set_xticks(x, [k.replace("_", "\n") for k in kinds], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("ms (MiniLM query embedding included)")
    ax.axhline(25, color="red", linestyle="--", linewidth=0.8, label="25 ms target")
    ax.set_title(f"recall, {entry['size']:,} memories, 10 tenants x 10 agents")
    ax.legend()


def plot_writes(ax: Any, writes: dict[str, Any]) -> None:
    """Writes per second, sustained and in a burst, one POST per memory and batched, each beside
    MiniLM alone on the same texts, with the 0.8 target drawn over each pair."""
    modes = [mode for mode in ("sustained", "burst", "model_core") if mode in writes]
    groups = [(mode, kind) for mode in modes for kind in ("per_post", "batched")]
    for n, (mode, kind) in enumerate(groups):
        entry = writes[mode][kind]
        standalone = entry["standalone_minilm_per_s"]
        ax.bar(n - 0.2, standalone, 0.4, color="grey", label="MiniLM alone" if n == 0 else None)
        ax.bar(n + 0.2, entry["write_throughput_per_s"], 0.4, color="tab:green")
        ax.hlines(0.8 * standalone, n - 0.4, n + 0.4, color="red", linestyle="--", linewidth=0.8)
        ax.text(n + 0.2, 0, f"{entry['throughput_ratio']:.2f}", ha="center", va="bottom")
    ax.set_xticks(
        range(len(groups)),
        [f"{mode.replace('_', ' ')}\n{kind.replace('_', ' ')}" for mode, kind in groups],
        fontsize=8,
    )
    ax.set_ylabel("memories per second (red: 0.8 of MiniLM alone)")
    ax.set_title(f"writes, gateway to memory.stored (:batch of {writes['batch_size']})")
    ax.legend()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--agents", type=int, default=100, help="agents the memories are spread over (1: one agent)"
    )
    parser.add_argument("--steady-seconds", type=int, default=20)
    parser.add_argument("--burst", type=int, default=2000, help="memories per burst")
    parser.add_argument(
        "--sustained", type=int, default=6000, help="memories per sustained (closed-loop) run"
    )
    parser.add_argument(
        "--window", type=int, default=1500, help="most memories in flight in a sustained run"
    )
    parser.add_argument("--skip-writes", action="store_true")
    args = parser.parse_args()
    if args.sustained < 2 * (args.window + BATCH):
        parser.error("--sustained must exceed twice --window (plus a batch) to leave a steady part")
    RESULTS.mkdir(exist_ok=True)
    embedder = MiniLMEmbedder(threads=1)
    texts = sentences(2000, seed=5)
    pool = (await embedder.embed(texts)).vectors
    await embedder.aclose()
    results: dict[str, Any] = {"recall": [], "machine_cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="engram-bench-memory-") as tmp:
        work = Path(tmp)
        for size in [int(s) for s in args.sizes.split(",") if s]:
            results["recall"].append(
                await recall_latency(size, args.queries, pool, texts, work, args.agents)
            )
        if not args.skip_writes:
            results["writes"] = await write_path(
                args.steady_seconds, args.burst, args.sustained, args.window, work
            )
    (RESULTS / "memory_recall.json").write_text(json.dumps(results, indent=2))
    if plot(results, RESULTS / "memory_recall.png"):
        print(f"plot: {RESULTS / 'memory_recall.png'}")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
