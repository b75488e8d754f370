"""Noisy neighbour: does one tenant's bulk load hold up another tenant's memory writes?

Run: python bench/noisy_neighbor.py [--memories 20000] [--b-seconds 60] [--embedder minilm]
Needs KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI (`python -m bench` provides them).

Embedding, memory and a gateway on fresh topics and databases, by default with the hashing
embedder (the pipeline's own work is then what competes; `--embedder minilm` makes the bulk
load's embedding the main cost, as under `make run`). Tenant A bulk-loads `--memories` memories
through `memories:batch` (100 per request, 4 connections, as fast as they are answered) while
tenant B writes 2 memories a second, one POST each, and recalls once a second. Phases, one
platform, each on new agents and waiting for the last one to drain:

1. B alone for `--b-seconds`: B's store→recallable (POST to `memory.stored` on Kafka).
2. A alone: A's throughput, first POST to last `memory.stored`.
3. A and B together, B writing until A's last memory is stored: B's store→recallable against
   (1), A's throughput against (2).
4. The same with one poison write a second from A: a memory the memory service dead-letters (a
   metadata key with a dot, through the gateway; once the gateway refuses that with a 422, the
   same `memory.write_requested` is published straight to Kafka).

Targets: B's p95 together ≤ 2x alone; A's throughput ≥ 0.8 of alone; with poison, B's p95
within 20 % of (3). Writes bench-results/noisy_neighbor.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._hops import Arrivals, hop_times, hops_listener  # noqa: E402
from bench._load import LeanClient  # noqa: E402
from bench.memory_recall import (  # noqa: E402
    new_agent,
    percentiles,
    sentences,
    wait_stored,
    write_platform,
)
from tests.support.services import ServiceProcess  # noqa: E402

RESULTS = ROOT / "bench-results"
TOGETHER_SECONDS = 20.0
"""The shortest phase with A's load: B keeps writing this long even if A's load is done first."""
EMBEDDERS = ("hashing", "minilm", "bge-small")
"""The hashing embedder costs next to nothing, so the pipeline's own work is what competes; a
local model makes the bulk load's embedding the main cost, as under `make run`."""


def embedder_env(embedder: str) -> dict[str, str]:
    """Both services that embed run `embedder`."""
    return {"ENGRAM_EMBEDDING_EMBEDDER": embedder, "ENGRAM_MEMORY_EMBEDDER": embedder}


BATCH = 100
A_CONNECTIONS = 4
B_WRITES_PER_S = 2.0
POISON_PER_S = 1.0
DRAIN_SECONDS = 300.0
"""How long a phase waits for its last memory to be stored; later ones count as lost."""


class Tenant:
    """A tenant's key and agent, and where its writes go."""

    def __init__(self, gateway: ServiceProcess, key: str, agent_id: str) -> None:
        self.gateway = gateway
        self.key = key
        self.agent_id = agent_id
        self.headers = {"Authorization": f"Bearer {key}"}


async def tenant(gateway: ServiceProcess, name: str) -> Tenant:
    """A new tenant with one agent."""
    key, agent_id = await new_agent(gateway, gateway.env, f"{name}-{uuid.uuid4().hex[:6]}")
    return Tenant(gateway, key, agent_id)


async def interactive(
    b: Tenant, seen: dict[str, float], until: asyncio.Event, arrivals: Arrivals
) -> dict[str, Any]:
    """B: one POST every half second and one recall a second until `until` is set; then waits
    for its writes to be stored. Store→recallable and recall latency."""
    sent: dict[str, float] = {}
    recalls: list[float] = []
    texts = iter(sentences(100_000, seed=int(time.time())))
    tasks: list[asyncio.Task[None]] = []
    async with httpx.AsyncClient(base_url=b.gateway.url, headers=b.headers, timeout=60) as client:

        async def write() -> None:
            t0 = time.perf_counter()
            answer = await client.post(
                f"/v1/agents/{b.agent_id}/memories", json={"content": next(texts)}
            )
            assert answer.status_code == 202, answer.text
            sent[answer.json()["memory_id"]] = t0

        async def recall() -> None:
            t0 = time.perf_counter()
            answer = await client.post(
                f"/v1/agents/{b.agent_id}/recall", json={"query": "the carrier"}
            )
            assert answer.status_code == 200, answer.text
            recalls.append(time.perf_counter() - t0)

        start, n = time.perf_counter(), 0
        while not until.is_set():
            await asyncio.sleep(max(0.0, start + n / B_WRITES_PER_S - time.perf_counter()))
            tasks.append(asyncio.create_task(write()))
            if n % 2 == 0:
                tasks.append(asyncio.create_task(recall()))
            n += 1
        await asyncio.gather(*tasks)
    await wait_stored(sent, seen, DRAIN_SECONDS)
    latencies = [seen[m] - t for m, t in sent.items() if m in seen] or [DRAIN_SECONDS]
    return {
        "store_to_recallable": {
            **percentiles(latencies),
            "lost": len(sent) - len([m for m in sent if m in seen]),
        },
        "recall": percentiles(recalls),
        "hops": {
            name: percentiles(times) for name, times in hop_times(sent, seen, arrivals).items()
        },
    }


async def bulk(a: Tenant, seen: dict[str, float], memories: int, seed: int) -> dict[str, Any]:
    """A: `memories` through `:batch` as fast as 4 connections are answered, until stored."""
    texts = sentences(memories, seed=seed)
    chunks = iter([texts[i : i + BATCH] for i in range(0, len(texts), BATCH)])
    sent: dict[str, float] = {}
    started = time.perf_counter()
    async with LeanClient(a.gateway.url, a.headers, connections=A_CONNECTIONS) as client:

        async def worker() -> None:
            for chunk in chunks:
                t0 = time.perf_counter()
                status, answer = await client.post_json(
                    f"/v1/agents/{a.agent_id}/memories:batch",
                    {"memories": [{"content": text} for text in chunk]},
                )
                assert status == 202, answer
                sent.update((m["memory_id"], t0) for m in answer["memories"])

        await asyncio.gather(*(worker() for _ in range(A_CONNECTIONS)))
    posted = time.perf_counter() - started
    await wait_stored(sent, seen, DRAIN_SECONDS)
    stored = [seen[m] for m in sent if m in seen]
    return {
        "memories": memories,
        "posting_seconds": round(posted, 1),
        "throughput_per_s": round(len(stored) / (max(stored) - started), 1) if stored else 0.0,
        "lost": len(sent) - len(stored),
    }


def poison_event(a: Tenant, tenant_id: str, n: int) -> dict[str, Any]:
    """A `memory.write_requested` with a dotted metadata key, as the gateway would publish it."""
    memory_id = f"mem_poison_{uuid.uuid4().hex[:16]}"
    return {
        "event_id": str(uuid.uuid4()),
        "event_type": "memory.write_requested",
        "schema_version": 1,
        "occurred_at": datetime.now(UTC).isoformat(),
        "tenant_id": tenant_id,
        "causation_id": None,
        "correlation_id": str(uuid.uuid4()),
        "payload": {
            "memory_id": memory_id,
            "agent_id": a.agent_id,
            "content": f"poison {n}",
            "type": "conversation",
            "metadata": {"a.b": "c"},
            "derived_from": [],
        },
    }


async def poison(a: Tenant, until: asyncio.Event) -> dict[str, int]:
    """One poison write a second from A: through the gateway, or straight to Kafka once the
    gateway refuses it."""
    from aiokafka import AIOKafkaProducer
    from pymongo import MongoClient

    env = a.gateway.env
    db: Any = MongoClient(env["MONGODB_URI"])[f"{env['ENGRAM_DATABASE_PREFIX']}gateway"]
    tenant_id = db.agents.find_one({"_id": a.agent_id})["tenant_id"]
    topic = f"{env['ENGRAM_TOPIC_PREFIX']}engram.memories.v1"
    producer = AIOKafkaProducer(bootstrap_servers=env["KAFKA_BOOTSTRAP_SERVERS"], acks="all")
    await producer.start()
    counts = {"through_gateway": 0, "straight_to_kafka": 0}
    try:
        async with httpx.AsyncClient(
            base_url=a.gateway.url, headers=a.headers, timeout=60
        ) as client:
            n = 0
            while not until.is_set():
                n += 1
                answer = await client.post(
                    f"/v1/agents/{a.agent_id}/memories",
                    json={"content": f"poison {n}", "metadata": {"a.b": "c"}},
                )
                if answer.status_code == 202:
                    counts["through_gateway"] += 1
                else:
                    event = poison_event(a, tenant_id, n)
                    await producer.send_and_wait(
                        topic,
                        json.dumps(event).encode(),
                        key=a.agent_id.encode(),
                        headers=[("event_type", b"memory.write_requested")],
                    )
                    counts["straight_to_kafka"] += 1
                try:
                    await asyncio.wait_for(until.wait(), 1 / POISON_PER_S)
                except TimeoutError:
                    pass
    finally:
        await producer.stop()
    return counts


async def together(
    gateway: ServiceProcess,
    seen: dict[str, float],
    arrivals: Arrivals,
    memories: int,
    seed: int,
    with_poison: bool,
) -> dict[str, Any]:
    """A's bulk load with B writing (and A's poison) until A's last memory is stored, and for
    at least `TOGETHER_SECONDS`."""
    a, b = await tenant(gateway, "bulk"), await tenant(gateway, "interactive")
    done = asyncio.Event()
    b_task = asyncio.create_task(interactive(b, seen, done, arrivals))
    p_task = asyncio.create_task(poison(a, done)) if with_poison else None
    started = time.perf_counter()
    a_result = await bulk(a, seen, memories, seed)
    await asyncio.sleep(max(0.0, started + TOGETHER_SECONDS - time.perf_counter()))
    done.set()
    result = {"a": a_result, "b": await b_task}
    if p_task is not None:
        result["poison"] = await p_task
    return result


def ratio(numerator: float, denominator: float) -> float:
    """Rounded ratio."""
    return round(numerator / max(denominator, 1e-9), 2)


async def run(
    memories: int, b_seconds: float, poison: bool = True, embedder: str = "hashing"
) -> dict[str, Any]:
    """The four phases on one platform, and the ratios the targets name."""
    seen: dict[str, float] = {}
    arrivals: Arrivals = {}
    with tempfile.TemporaryDirectory(prefix="engram-bench-noisy-") as tmp:
        async with write_platform(Path(tmp), "noisy", seen, embedder_env(embedder)) as (
            gateway,
            _,
            _,
        ):
            listening = asyncio.Event()
            hops = asyncio.create_task(hops_listener(gateway.env, arrivals, listening))
            await listening.wait()
            b_alone = await tenant(gateway, "interactive-alone")
            done = asyncio.Event()
            b_task = asyncio.create_task(interactive(b_alone, seen, done, arrivals))
            await asyncio.sleep(b_seconds)
            done.set()
            solo_b = await b_task
            print(json.dumps({"b_alone": solo_b}), flush=True)
            solo_a = await bulk(await tenant(gateway, "bulk-alone"), seen, memories, seed=11)
            print(json.dumps({"a_alone": solo_a}), flush=True)
            mixed = await together(gateway, seen, arrivals, memories, 12, with_poison=False)
            print(json.dumps({"together": mixed}), flush=True)
            poisoned = (
                await together(gateway, seen, arrivals, memories, 13, with_poison=True)
                if poison
                else mixed
            )
            print(json.dumps({"with_poison": poisoned if poison else "skipped"}), flush=True)
            hops.cancel()
    b_p95 = solo_b["store_to_recallable"]["p95_ms"]
    mixed_p95 = mixed["b"]["store_to_recallable"]["p95_ms"]
    return {
        "embedder": embedder,
        "memories": memories,
        "b_alone": solo_b,
        "a_alone": solo_a,
        "together": mixed,
        "with_poison": poisoned if poison else "skipped",
        "ratios": {
            "b_p95_together_over_alone": ratio(mixed_p95, b_p95),
            "a_throughput_together_over_alone": ratio(
                mixed["a"]["throughput_per_s"], solo_a["throughput_per_s"]
            ),
            "b_p95_with_poison_over_together": ratio(
                poisoned["b"]["store_to_recallable"]["p95_ms"], mixed_p95
            )
            if poison
            else None,
        },
        "targets": {
            "b_p95_together_over_alone": "<= 2",
            "a_throughput_together_over_alone": ">= 0.8",
            "b_p95_with_poison_over_together": "<= 1.2",
        },
    }


def main(argv: list[str] | None = None) -> int:
    """Run, print the figures and write bench-results/noisy_neighbor.json."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=20_000, help="tenant A's bulk load")
    parser.add_argument(
        "--b-seconds",
        type=float,
        default=60.0,
        help="tenant B's solo run (60 s: ~120 writes, so its p95 is not one or two writes')",
    )
    parser.add_argument("--without-poison", action="store_true", help="skip phase 4")
    parser.add_argument(
        "--embedder",
        choices=EMBEDDERS,
        default="hashing",
        help="what both services embed with (a local model needs `make models`)",
    )
    args = parser.parse_args(argv)
    result = asyncio.run(
        run(args.memories, args.b_seconds, poison=not args.without_poison, embedder=args.embedder)
    )
    result["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    print(f"embedder: {args.embedder}")
    poisoned = result["with_poison"]
    print(
        f"B store→recallable ms: alone {result['b_alone']['store_to_recallable']}, "
        f"together {result['together']['b']['store_to_recallable']}, with poison "
        f"{poisoned['b']['store_to_recallable'] if isinstance(poisoned, dict) else poisoned}"
    )
    print(
        f"A memories/s: alone {result['a_alone']['throughput_per_s']}, "
        f"together {result['together']['a']['throughput_per_s']}"
    )
    for phase in ("b_alone", "together"):
        hops = (result[phase] if phase == "b_alone" else result[phase]["b"])["hops"]
        print(
            f"B hops {phase} (p50/p95 ms): "
            + ", ".join(f"{name} {v['p50_ms']}/{v['p95_ms']}" for name, v in hops.items())
        )
    print(json.dumps(result["ratios"]))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "noisy_neighbor.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
