"""Retrieval quality: what dense, lexical and hybrid recall find, through the gateway.

Run: python bench/retrieval_quality.py [--sizes 10000,100000] [--per-kind 240] [--filtered 120]
Needs KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI (`python -m bench` provides them).

1. A seeded corpus (bench/_corpus.py) over 10 tenants x 10 agents, four users per agent, each
   memory with metadata: paraphrasable facts about people, memories naming identifiers among
   look-alikes of the same shape, and filler. MiniLM embeds every memory for real (cached under
   ~/.cache/engram-bench between runs); the memory service's own writer lays the collection out.
2. Questions: paraphrases (no words of the memory but the person's name), identifier questions
   ("where is ORD-17823 now?"), scoped questions about "the user" with a filter the answer meets
   (user, user and channel, a priority floor, a time window, a set of channels) and the same
   words without the filter, the hand-written retrieval fixture (60 memories, 36 questions), and
   40 questions no memory answers (the share answered with nothing shows what the floor does).
3. Each question is asked through the gateway in each mode with top_k 5 and the default floor,
   one at a time: hit@1, hit@5, MRR@5 (1/rank of the answer within the top 5, else 0), the
   filtered answers that break their filter, and p50/p95 of the request. Hybrid is asked again
   with reciprocal-rank fusion, to compare with the default convex fusion.
4. Sustained memory writes (`:batch` of 50, a closed loop) with the lexical vector and without
   it, alternated in pairs on fresh topics and databases: the throughput ratio.

Writes bench-results/retrieval_quality.json and retrieval_quality.png (with matplotlib).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._corpus import Memory, Query, corpus, queries, satisfies  # noqa: E402
from bench._key_clients import KeyClients, bearer_client  # noqa: E402
from bench._memory_points import write_collection  # noqa: E402
from bench.memory_recall import (  # noqa: E402
    BATCH,
    base_env,
    percentiles,
    sentences,
    sustained_writes,
    tenants_and_agents,
    write_platform,
)
from engram_devstack import free_port  # noqa: E402
from engram_embedders import Embedder, MiniLMEmbedder  # noqa: E402
from engram_events.content import content_sha256  # noqa: E402
from engram_events.memory_filter import metadata_instants  # noqa: E402
from engram_memory.domain.rows import MemoryRow  # noqa: E402
from engram_vectors.lexical import ENCODERS, LEXICAL_ENCODER  # noqa: E402
from tests.fixtures.retrieval.quality import load_fixture  # noqa: E402
from tests.support.services import ServiceProcess  # noqa: E402

RESULTS = ROOT / "bench-results"
CACHE = Path.home() / ".cache" / "engram-bench"
SEED = 27
AGENTS = 100
MODES = ("dense", "lexical", "hybrid")
TOP_K = 5
WARM_UP = 50
"""Questions asked before a pass is timed: the first pass after a start pages the collection in."""
DEFAULT_FLOOR: float | None = None
Run = tuple[str, str, float | None]
"""A pass over every question: its name, the mode, and the floor (None: the default)."""
MAIN: list[tuple[dict[str, str], list[Run]]] = [
    ({}, [(mode, mode, None) for mode in MODES]),
    ({"ENGRAM_MEMORY_FUSION": "rrf"}, [("hybrid_rrf", "hybrid", None)]),
]
"""The three modes under the default settings, and hybrid with reciprocal-rank fusion."""
ALPHAS = ((0.7, 0.7), (0.8, 0.7), (0.95, 0.7), (1.0, 0.7), (0.9, 0.5), (0.9, 0.9))
SWEEP: list[tuple[dict[str, str], list[Run]]] = [
    (
        {"ENGRAM_MEMORY_CONVEX_ALPHA": str(a), "ENGRAM_MEMORY_IDENTIFIER_ALPHA": str(i)},
        [(f"alpha={a} identifier_alpha={i}", "hybrid", DEFAULT_FLOOR)],
    )
    for a, i in ALPHAS
] + [({}, [(f"min_score={f}", "hybrid", f) for f in (0.0, 0.15, 0.35)])]
"""Hybrid under other convex weights (the defaults are 0.9 and 0.7) and other floors."""


async def embed_all(texts: list[str], embedder: Embedder) -> dict[str, np.ndarray]:
    """Document vectors of every distinct text, from the cache when this corpus was embedded."""
    distinct = sorted(set(texts))
    digest = hashlib.sha256(
        "\n".join([embedder.provenance.fingerprint, *distinct]).encode()
    ).hexdigest()[:16]
    cached = CACHE / f"retrieval-{digest}.npy"
    if cached.exists():
        matrix = np.load(cached)
    else:
        started, parts = time.perf_counter(), []
        for start in range(0, len(distinct), 256):
            parts.append((await embedder.embed(distinct[start : start + 256])).vectors)
            if (start // 256) % 40 == 0:
                print(f"[bench] embedded {start + len(parts[-1])}/{len(distinct)}", flush=True)
        matrix = np.vstack(parts).astype(np.float32)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(cached, matrix)
        print(f"[bench] embedded {len(distinct)} texts in {time.perf_counter() - started:.0f}s")
    return dict(zip(distinct, matrix, strict=True))


def fixture_memories() -> tuple[list[Memory], list[Query]]:
    """The hand-written fixture as agent 0's memories (beside its generated ones)."""
    data = load_fixture()
    created = corpus(SEED, 1, 1)[0].created_at
    memories = [
        Memory(f"fx-{m['id']}", 0, m["content"], "fixture", "conversation", "user-1", {}, created)
        for m in data["memories"]
    ]
    asked = [
        Query(q["query"], 0, tuple(f"fx-{r}" for r in q["relevant"]), "fixture")
        for q in data["queries"]
    ]
    return memories, asked


def row(memory: Memory, owner: dict[str, str]) -> MemoryRow:
    """The memory service's row for a memory of this corpus."""
    return MemoryRow(
        tenant_id=owner["tenant_id"],
        memory_id=memory.memory_id,
        agent_id=owner["agent_id"],
        status="active",
        type=memory.type,
        content_sha256=content_sha256(memory.content),
        created_at=memory.created_at,
        content=memory.content,
        metadata=memory.metadata,
        metadata_at=metadata_instants(memory.metadata),
        user_id=memory.user_id,
    )


class Asker:
    """Recall through the gateway, one request at a time, over kept-alive connections."""

    def __init__(self, gateway: ServiceProcess, agents: list[dict[str, str]]) -> None:
        self.gateway = gateway
        self.agents = agents
        self.clients = KeyClients(bearer_client(gateway.url))

    def ask(
        self, query: Query, mode: str, filtered: bool, min_score: float | None = None
    ) -> tuple[dict[str, Any], float]:
        """The answer and the seconds the request took (the default floor unless given)."""
        owner = self.agents[query.agent]
        client = self.clients(owner["key"])
        body: dict[str, Any] = {"query": query.text, "top_k": TOP_K, "mode": mode}
        if min_score is not None:
            body["min_score"] = min_score
        if filtered and query.filter is not None:
            body["filter"] = query.filter
        started = time.perf_counter()
        response = client.post(f"/v1/agents/{owner['agent_id']}/recall", json=body)
        took = time.perf_counter() - started
        if response.status_code != 200:
            raise RuntimeError(f"recall answered {response.status_code}: {response.text[:300]}")
        return response.json(), took

    def close(self) -> None:
        self.clients.close()


def score(asked: list[tuple[Query, dict[str, Any], bool]]) -> dict[str, Any]:
    """hit@1, hit@5, MRR@5, answers dropped by the floor and filter violations of one set."""
    ranks, violations, empty, dropped = [], 0, 0, 0
    for query, answer, filtered in asked:
        found = [r["memory_id"] for r in answer["results"]]
        rank = next((n for n, m in enumerate(found, 1) if m in query.relevant), None)
        ranks.append(rank)
        empty += not found
        dropped += answer.get("dropped_below_floor", 0)
        if filtered and query.filter is not None:
            violations += sum(not satisfies(r, query.filter) for r in answer["results"])
    n = len(ranks)
    return {
        "queries": n,
        "hit@1": round(sum(r == 1 for r in ranks) / n, 3),
        "hit@5": round(sum(r is not None for r in ranks) / n, 3),
        "mrr@5": round(sum(1 / r for r in ranks if r) / n, 3),
        "empty_answers": empty,
        "empty_rate": round(empty / n, 3),
        "dropped_below_floor": dropped,
        "filter_violations": violations,
    }


def run_mode(
    asker: Asker, asked: list[Query], mode: str, min_score: float | None = None
) -> dict[str, Any]:
    """Every question in one mode (the filtered ones with and without their filter)."""
    for query in asked[:WARM_UP]:
        asker.ask(query, mode, True, min_score)
    sets: dict[str, list[tuple[Query, dict[str, Any], bool]]] = {}
    latencies = []
    for query in asked:
        passes = (True, False) if query.kind == "filtered" else (True,)
        for filtered in passes:
            answer, took = asker.ask(query, mode, filtered, min_score)
            latencies.append(took)
            kind = query.kind if filtered else "filtered_without_filter"
            sets.setdefault(kind, []).append((query, answer, filtered))
    out = {kind: score(entries) for kind, entries in sets.items()}
    out["latency"] = percentiles(latencies)
    return out


async def measure_size(
    size: int,
    memories: list[Memory],
    asked: list[Query],
    vectors: dict[str, np.ndarray],
    provenance: dict[str, Any],
    work: Path,
    sweep: bool,
    encoder: str,
) -> dict[str, Any]:
    """Load one corpus size, then ask every question in every mode (and, with `sweep`, under
    other fusion weights and floors)."""
    env = base_env()
    directory = work / f"vectors-{size}"
    port = free_port()
    gateway = ServiceProcess(
        "gateway",
        {**env, "ENGRAM_GATEWAY_MEMORY_URL": f"http://127.0.0.1:{port}"},
        free_port(),
        work / "logs",
    )
    result: dict[str, Any] = {"size": size, "memories": len(memories)}
    try:
        gateway.start()
        agents = tenants_and_agents(gateway, env)
        rows = [row(m, agents[m.agent]) for m in memories]
        matrix = np.vstack([vectors[m.content] for m in memories])
        result["load_seconds"] = round(
            await write_collection(directory, rows, matrix, provenance, encoder=encoder), 1
        )
        asker = Asker(gateway, agents)
        plans = {"modes": MAIN}
        if sweep:
            plans["sweep"] = SWEEP
        for part, variants in plans.items():
            result[part] = {}
            for settings, runs in variants:
                memory = ServiceProcess(
                    "memory",
                    {**env, **settings, "ENGRAM_MEMORY_VECTOR_PATH": str(directory)},
                    port,
                    work / "logs",
                )
                memory.start()
                try:
                    for name, mode, floor in runs:
                        result[part][name] = run_mode(asker, asked, mode, floor)
                        print(f"[bench] {size}: {name} {json.dumps(result[part][name])}")
                finally:
                    memory.stop()
        asker.close()
    finally:
        gateway.stop()
    return result


async def write_ratio(sustained: int, window: int, pairs: int, work: Path) -> dict[str, Any]:
    """Sustained `:batch` writes with and without the lexical vector, alternated in pairs."""
    runs: dict[str, list[float]] = {"lexical": [], "dense_only": []}
    seen: dict[str, float] = {}
    for n in range(pairs):
        order = (True, False) if n % 2 == 0 else (False, True)
        for lexical in order:
            name = "lexical" if lexical else "dense_only"
            texts = sentences(sustained, seed=1000 + 2 * n + lexical)
            extra = {"ENGRAM_MEMORY_LEXICAL": "true" if lexical else "false"}
            async with write_platform(work, f"{name}-{n}", seen, extra) as (gw, key, agent):
                done = await sustained_writes(gw, key, agent, texts, seen, BATCH, window, [])
            runs[name].append(done["write_throughput_per_s"])
            print(f"[bench] writes {name} (pair {n + 1}): {done}", flush=True)
    ratios = [round(a / b, 3) for a, b in zip(runs["lexical"], runs["dense_only"], strict=True)]
    return {"per_s": runs, "ratio_per_pair": ratios, "ratio_mean": round(float(np.mean(ratios)), 3)}


def plot(results: dict[str, Any], target: Path) -> bool:
    """hit@5 per question set and mode at each size, and the p95 of each mode."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = results["sizes"]
    fig, axes = plt.subplots(1, len(sizes) + 1, figsize=(6 * (len(sizes) + 1), 4.5))
    kinds = ("paraphrase", "identifier", "filtered", "filtered_without_filter", "fixture")
    names = ("dense", "lexical", "hybrid", "hybrid_rrf")
    for ax, entry in zip(axes, sizes, strict=False):
        for n, name in enumerate(names):
            values = [entry["modes"][name][k]["hit@5"] for k in kinds]
            ax.bar([i + n * 0.2 for i in range(len(kinds))], values, 0.2, label=name)
        ax.set_xticks(
            [i + 0.3 for i in range(len(kinds))],
            [k.replace("_", "\n") for k in kinds],
            fontsize=8,
        )
        ax.set_ylim(0, 1.05)
        ax.set_title(f"hit@5, {entry['size']:,} memories")
        ax.legend(fontsize=8)
    ax = axes[-1]
    for n, name in enumerate(names):
        values = [entry["modes"][name]["latency"]["p95_ms"] for entry in sizes]
        ax.bar([i + n * 0.2 for i in range(len(sizes))], values, 0.2, label=name)
    ax.axhline(25, color="red", linewidth=1)
    ax.set_xticks([i + 0.3 for i in range(len(sizes))], [f"{e['size']:,}" for e in sizes])
    ax.set_ylabel("recall p95 through the gateway, ms (red: 25 ms)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    return True


def table(results: dict[str, Any]) -> str:
    """The figures as a text table."""
    lines = ["size     set                      pass        hit@1  hit@5  mrr@5  violations"]
    kinds = ("paraphrase", "identifier", "filtered", "filtered_without_filter", "fixture")
    for entry in results["sizes"]:
        for part in ("modes", "sweep"):
            for name, modes in entry.get(part, {}).items():
                lines.append(
                    f"{entry['size']:<8} unrelated questions answered with nothing, {name}: "
                    f"{modes['unrelated']['empty_rate']:.3f}"
                )
        for kind in kinds:
            for name, modes in entry["modes"].items():
                s = modes[kind]
                lines.append(
                    f"{entry['size']:<8} {kind:<24} {name:<11} {s['hit@1']:.3f}  "
                    f"{s['hit@5']:.3f}  {s['mrr@5']:.3f}  {s['filter_violations']}"
                )
        for name, modes in entry["modes"].items():
            lat = modes["latency"]
            lines.append(
                f"{entry['size']:<8} latency {name:<11} p50 {lat['p50_ms']} ms  "
                f"p95 {lat['p95_ms']} ms"
            )
        for name, modes in entry.get("sweep", {}).items():
            figures = "  ".join(
                f"{kind[:10]} {modes[kind]['hit@1']:.3f}/{modes[kind]['hit@5']:.3f}"
                for kind in kinds
            )
            lines.append(f"{entry['size']:<8} sweep {name:<32} hit@1/hit@5: {figures}")
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="memories per corpus")
    parser.add_argument("--per-kind", type=int, default=240, help="paraphrase and identifier")
    parser.add_argument("--filtered", type=int, default=120, help="scoped, filtered questions")
    parser.add_argument("--sustained", type=int, default=6000, help="memories per write run")
    parser.add_argument("--window", type=int, default=1500, help="most memories in flight")
    parser.add_argument("--pairs", type=int, default=3, help="write runs with and without")
    parser.add_argument("--skip-writes", action="store_true")
    parser.add_argument(
        "--encoder",
        choices=sorted(ENCODERS),
        default=LEXICAL_ENCODER,
        help="the lexical encoder the collection is built with (the service adopts it)",
    )
    parser.add_argument(
        "--no-sweep",
        dest="sweep",
        action="store_false",
        help="skip hybrid under other fusion weights and floors (~3 minutes a size)",
    )
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    if any(size % AGENTS for size in sizes):
        parser.error(f"each size must be a multiple of {AGENTS} (memories spread over agents)")
    RESULTS.mkdir(exist_ok=True)
    extra, fixture_questions = fixture_memories()
    full = corpus(SEED, AGENTS, max(sizes) // AGENTS)
    embedder = MiniLMEmbedder(threads=2)
    vectors = await embed_all([m.content for m in full + extra], embedder)
    provenance = {
        **embedder.provenance.model_dump(),
        "fingerprint": embedder.provenance.fingerprint,
    }
    await embedder.aclose()
    results: dict[str, Any] = {
        "seed": SEED,
        "top_k": TOP_K,
        "encoder": args.encoder,
        "date": time.strftime("%Y-%m-%d"),
        "sizes": [],
    }
    with tempfile.TemporaryDirectory(prefix="engram-bench-retrieval-") as tmp:
        work = Path(tmp)
        for size in sizes:
            per_agent = size // AGENTS
            memories = [m for m in full if int(m.memory_id.split("-")[1]) < per_agent]
            asked = queries(memories, SEED, args.per_kind, args.filtered) + fixture_questions
            random.Random(size).shuffle(asked)
            results["sizes"].append(
                await measure_size(
                    size,
                    memories + extra,
                    asked,
                    vectors,
                    provenance,
                    work,
                    args.sweep,
                    args.encoder,
                )
            )
        if not args.skip_writes:
            results["writes"] = await write_ratio(args.sustained, args.window, args.pairs, work)
    (RESULTS / "retrieval_quality.json").write_text(json.dumps(results, indent=2))
    if plot(results, RESULTS / "retrieval_quality.png"):
        print(f"plot: {RESULTS / 'retrieval_quality.png'}")
    print(table(results))
    if "writes" in results:
        print(f"write ratio lexical/dense-only: {results['writes']}")


if __name__ == "__main__":
    asyncio.run(main())
