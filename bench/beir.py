"""BEIR SciFact: how well lexical, dense and hybrid recall rank scientific abstracts.

Run: python bench/beir.py [--data PATH] [--offline] [--encoder ID]
     [--embedder minilm|bge-small|hashing] [--modes lexical,dense,hybrid] [--limit N]
     [--offline-dense bge-small-en-v1.5-int8,bge-small-en-v1.5-fp32]
Needs KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI (`python -m bench` provides them), except with
--offline. The data set is BEIR's SciFact (corpus.jsonl, queries.jsonl, qrels/test.tsv); its
path comes from --data or ENGRAM_BEIR_SCIFACT, by default ../shared/data/beir-scifact from the
repository root. It is read, never copied.

1. Offline: every abstract (title + " " + text) and each test claim is encoded with the lexical
   encoder, and documents are scored as the engine scores them: the sum over the claim's terms
   of Qdrant's IDF, ln(1 + (N - n + 0.5) / (n + 0.5)), times the document's BM25 weight. No
   service runs; this is the figure to iterate an encoder on.
2. Through the gateway: the 5,183 abstracts become memories of one agent (written by the memory
   service's own writer, dense vectors from the chosen embedder, the lexical vectors of the
   chosen encoder), then each claim is recalled through the gateway in each mode with top_k 100
   and no floor (min_score -1).

3. Offline dense (--offline-dense): each named bge-small file embeds the abstracts and the
   claims (with the query instruction) and ranks by exact cosine; no service runs. This is the
   int8-against-fp32 check.

All report nDCG@10 (BEIR's main figure; trec_eval's gain, the qrels' grade) and recall@100
beside the published anchors. Writes bench-results/beir.json.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._memory_points import write_collection  # noqa: E402
from bench.memory_recall import base_env  # noqa: E402
from engram_devstack import free_port  # noqa: E402
from engram_embedders import BgeSmallEmbedder, Embedder, make_embedder  # noqa: E402
from engram_embedders.local_models import LOCAL_KINDS  # noqa: E402
from engram_events.content import content_sha256  # noqa: E402
from engram_memory.domain.rows import MemoryRow  # noqa: E402
from engram_vectors.lexical import ENCODERS, LEXICAL_ENCODER, document_vector, query_vector  # noqa: E402
from tests.support.models import model_dir  # noqa: E402
from tests.support.services import ServiceProcess  # noqa: E402
from tests.support.tenants import create_tenant  # noqa: E402

RESULTS = ROOT / "bench-results"
CACHE = Path.home() / ".cache" / "engram-bench"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "beir-scifact"
TOP_K = 100
NO_FLOOR = -1.0
MODES = ("lexical", "dense", "hybrid")
ANCHORS = {
    "bm25_flat_anserini": {"ndcg@10": 0.679},
    "bm25_multifield": {"ndcg@10": 0.665},
    "minilm_dense_mteb": {"ndcg@10": 0.645, "recall@100": 0.925},
}
"""Published figures on this test split (the data set's README names the sources)."""


@dataclass(frozen=True)
class SciFact:
    """The abstracts, the test claims and their graded judgements."""

    docs: dict[str, str]
    claims: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load(directory: Path, limit: int | None) -> SciFact:
    """The corpus as title + " " + text, and the first `limit` judged test claims."""
    docs = {}
    with (directory / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            docs[doc["_id"]] = f"{doc['title']} {doc['text']}".strip()
    texts = {}
    with (directory / "queries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            query = json.loads(line)
            texts[query["_id"]] = query["text"]
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with (directory / "qrels" / "test.tsv").open(encoding="utf-8") as lines:
        next(lines)
        for line in lines:
            query_id, doc_id, grade = line.split()
            qrels[query_id][doc_id] = int(grade)
    chosen = list(qrels)[:limit] if limit else list(qrels)
    return SciFact(docs, {q: texts[q] for q in chosen}, {q: qrels[q] for q in chosen})


def ndcg_at(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    """trec_eval's nDCG@k: gain is the grade, discount log2(rank + 1), ideal from the qrels."""
    dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


def recall_at(ranked: Sequence[str], judged: Mapping[str, int], k: int = 100) -> float:
    """The share of the relevant documents among the first k."""
    relevant = {d for d, g in judged.items() if g > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def scores(
    rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, float]:
    """Mean nDCG@10 and recall@100 over the claims."""
    n = len(qrels)
    return {
        "ndcg@10": round(sum(ndcg_at(rankings.get(q, []), j) for q, j in qrels.items()) / n, 4),
        "recall@100": round(
            sum(recall_at(rankings.get(q, []), j) for q, j in qrels.items()) / n, 4
        ),
        "queries": n,
    }


def offline_rankings(data: SciFact, encoder: str) -> dict[str, list[str]]:
    """The top 100 of each claim as the engine scores it: IDF over the corpus x BM25 weight."""
    postings: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for doc_id, text in data.docs.items():
        vector = document_vector(text, encoder)
        for index, weight in zip(vector.indices, vector.values, strict=True):
            postings[index].append((doc_id, weight))
    total = len(data.docs)
    rankings = {}
    for query_id, text in data.claims.items():
        summed: dict[str, float] = defaultdict(float)
        for index in query_vector(text, encoder).indices:
            holding = len(postings.get(index, ()))
            idf = math.log(1.0 + (total - holding + 0.5) / (holding + 0.5))
            for doc_id, weight in postings.get(index, ()):
                summed[doc_id] += idf * weight
        ordered = sorted(summed.items(), key=lambda hit: (-hit[1], hit[0]))
        rankings[query_id] = [doc_id for doc_id, _ in ordered[:TOP_K]]
    return rankings


async def embed_corpus(data: SciFact, embedder: Embedder, kind: str) -> np.ndarray:
    """Dense vectors of the abstracts in corpus order; a local model's are cached between runs."""
    texts = list(data.docs.values())
    digest = hashlib.sha256(
        "\n".join([embedder.provenance.fingerprint, *texts]).encode()
    ).hexdigest()[:16]
    cached = CACHE / f"beir-scifact-{digest}.npy"
    if kind in LOCAL_KINDS and cached.exists():
        loaded: np.ndarray = np.load(cached)
        return loaded
    started, parts = time.perf_counter(), []
    for start in range(0, len(texts), 64):
        parts.append(np.asarray((await embedder.embed(texts[start : start + 64])).vectors))
        if (start // 64) % 10 == 0:
            print(f"[bench] beir: embedded {start + len(parts[-1])}/{len(texts)}", flush=True)
    matrix = np.vstack(parts).astype(np.float32)
    print(f"[bench] beir: embedded {len(texts)} abstracts in {time.perf_counter() - started:.0f}s")
    if kind in LOCAL_KINDS:
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(cached, matrix)
    return matrix


def new_agent(gateway: ServiceProcess, env: dict[str, str]) -> dict[str, str]:
    """A fresh tenant and one agent of it, created the way users do."""
    from pymongo import MongoClient

    key = create_tenant(env, "beir")
    with httpx.Client(base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}) as c:
        agent_id = c.post("/v1/agents", json={}).json()["agent_id"]
    registry: Any = MongoClient(env["MONGODB_URI"])[f"{env['ENGRAM_DATABASE_PREFIX']}gateway"]
    tenant_id = registry.agents.find_one({"_id": agent_id})["tenant_id"]
    return {"key": key, "agent_id": agent_id, "tenant_id": tenant_id}


def ask_all(
    gateway: ServiceProcess, agent: dict[str, str], data: SciFact, mode: str
) -> tuple[dict[str, list[str]], float]:
    """Each claim recalled through the gateway: its memory ids in rank order, and the p50 ms."""
    rankings, took = {}, []
    headers = {"Authorization": f"Bearer {agent['key']}"}
    with httpx.Client(base_url=gateway.url, headers=headers, timeout=60) as client:
        for n, (query_id, text) in enumerate(data.claims.items(), 1):
            body = {"query": text, "top_k": TOP_K, "mode": mode, "min_score": NO_FLOOR}
            started = time.perf_counter()
            response = client.post(f"/v1/agents/{agent['agent_id']}/recall", json=body)
            took.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise RuntimeError(f"recall answered {response.status_code}: {response.text[:300]}")
            rankings[query_id] = [r["memory_id"] for r in response.json()["results"]]
            if n % 100 == 0:
                print(f"[bench] beir: {mode} {n}/{len(data.claims)}", flush=True)
    return rankings, round(float(np.percentile(np.array(took) * 1000, 50)), 1)


async def through_gateway(
    data: SciFact, kind: str, encoder: str, modes: Sequence[str], work: Path
) -> dict[str, Any]:
    """Load the abstracts as one agent's memories, then recall every claim in each mode."""
    env = base_env()
    options: dict[str, Any] = {"threads": 2} if kind in LOCAL_KINDS else {}
    embedder = make_embedder(kind, **options)  # type: ignore[arg-type]
    matrix = await embed_corpus(data, embedder, kind)
    provenance = {
        **embedder.provenance.model_dump(),
        "fingerprint": embedder.provenance.fingerprint,
    }
    await embedder.aclose()
    env |= {
        "ENGRAM_EMBEDDING_EMBEDDER": kind,
        "ENGRAM_MEMORY_EMBEDDER": kind,
        "ENGRAM_MODEL_DIR": str(model_dir().resolve()),
    }
    port = free_port()
    gateway = ServiceProcess(
        "gateway",
        {**env, "ENGRAM_GATEWAY_MEMORY_URL": f"http://127.0.0.1:{port}"},
        free_port(),
        work / "logs",
    )
    result: dict[str, Any] = {"embedder": kind, "encoder": encoder, "memories": len(data.docs)}
    gateway.start()
    try:
        agent = new_agent(gateway, env)
        now = datetime.now(UTC)
        rows = [
            MemoryRow(
                tenant_id=agent["tenant_id"],
                memory_id=doc_id,
                agent_id=agent["agent_id"],
                status="active",
                type="fact",
                content_sha256=content_sha256(text),
                created_at=now,
                content=text,
                metadata={},
                metadata_at={},
            )
            for doc_id, text in data.docs.items()
        ]
        directory = work / "vectors"
        result["load_seconds"] = round(
            await write_collection(directory, rows, matrix, provenance, encoder=encoder), 1
        )
        print(
            f"[bench] beir: {len(rows)} memories written in {result['load_seconds']}s", flush=True
        )
        memory = ServiceProcess(
            "memory", {**env, "ENGRAM_MEMORY_VECTOR_PATH": str(directory)}, port, work / "logs"
        )
        memory.start()
        try:
            for mode in modes:
                rankings, p50 = ask_all(gateway, agent, data, mode)
                result[mode] = {**scores(rankings, data.qrels), "p50_ms": p50}
                print(f"[bench] beir: gateway {kind} {mode} {json.dumps(result[mode])}", flush=True)
        finally:
            memory.stop()
    finally:
        gateway.stop()
    return result


async def offline_dense(data: SciFact, variant: str) -> dict[str, Any]:
    """One bge-small file's dense ranking by exact cosine, claims embedded as queries."""
    embedder = BgeSmallEmbedder(threads=2, model_dir=model_dir(), variant=variant)
    matrix = await embed_corpus(data, embedder, "bge-small")
    claims = (await embedder.embed_queries(list(data.claims.values()))).vectors
    doc_ids = list(data.docs)
    rankings = {}
    for query_id, row in zip(data.claims, claims @ matrix.T, strict=True):
        top = np.argsort(-row, kind="stable")[:TOP_K]
        rankings[query_id] = [doc_ids[i] for i in top]
    precision = embedder.provenance.precision
    await embedder.aclose()
    return {"variant": variant, "precision": precision, **scores(rankings, data.qrels)}


def ratios(figures: Mapping[str, Any]) -> dict[str, float]:
    """Lexical nDCG@10 over each BM25 anchor, dense and hybrid over MiniLM's."""
    out = {}
    if "lexical" in figures:
        for anchor in ("bm25_multifield", "bm25_flat_anserini"):
            out[f"lexical/{anchor}"] = round(
                figures["lexical"]["ndcg@10"] / ANCHORS[anchor]["ndcg@10"], 3
            )
    for mode in ("dense", "hybrid"):
        if mode in figures:
            out[f"{mode}/minilm_dense_mteb"] = round(
                figures[mode]["ndcg@10"] / ANCHORS["minilm_dense_mteb"]["ndcg@10"], 3
            )
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("ENGRAM_BEIR_SCIFACT", DEFAULT_DATA))
    )
    parser.add_argument(
        "--offline", action="store_true", help="score the encoder only, no services"
    )
    parser.add_argument("--encoder", choices=sorted(ENCODERS), default=LEXICAL_ENCODER)
    parser.add_argument("--embedder", choices=("minilm", "bge-small", "hashing"), default="minilm")
    parser.add_argument(
        "--offline-dense",
        default="",
        metavar="FILES",
        help="comma-separated bge-small files to rank offline (e.g. bge-small-en-v1.5-int8)",
    )
    parser.add_argument("--modes", default=",".join(MODES), help="through the gateway")
    parser.add_argument("--limit", type=int, default=None, help="only the first N test claims")
    args = parser.parse_args()
    if not (args.data / "corpus.jsonl").exists():
        parser.error(f"no SciFact corpus under {args.data} (give --data or ENGRAM_BEIR_SCIFACT)")
    modes = [m for m in args.modes.split(",") if m]
    if set(modes) - set(MODES):
        parser.error(f"modes are among {MODES}")
    data = load(args.data, args.limit)
    print(f"[bench] beir: {len(data.docs)} abstracts, {len(data.claims)} claims", flush=True)
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "top_k": TOP_K,
        "anchors": ANCHORS,
    }
    started = time.perf_counter()
    offline = {
        encoder: scores(offline_rankings(data, encoder), data.qrels) for encoder in sorted(ENCODERS)
    }
    results["offline"] = offline
    for encoder, figures in offline.items():
        print(f"[bench] beir: offline {encoder} {json.dumps(figures)}", flush=True)
    print(f"[bench] beir: offline scoring took {time.perf_counter() - started:.0f}s", flush=True)
    for variant in (v for v in args.offline_dense.split(",") if v):
        dense = await offline_dense(data, variant)
        results.setdefault("offline_dense", []).append(dense)
        print(f"[bench] beir: offline dense {json.dumps(dense)}", flush=True)
    if not args.offline:
        with tempfile.TemporaryDirectory(prefix="engram-bench-beir-") as tmp:
            gateway = await through_gateway(data, args.embedder, args.encoder, modes, Path(tmp))
        gateway["ratios"] = ratios(gateway)
        results["gateway"] = gateway
        print(f"[bench] beir: ratios {json.dumps(gateway['ratios'])}")
    RESULTS.mkdir(exist_ok=True)
    name = "beir_offline.json" if args.offline else "beir.json"
    (RESULTS / name).write_text(json.dumps(results, indent=2))
    print(f"[bench] beir: results in {RESULTS / name}")


if __name__ == "__main__":
    asyncio.run(main())
