"""Fusion replayed offline: retrieval_quality's and SciFact's candidates ranked by engram_vectors.

Run: python bench/fusion_replay.py [--sizes 10000,100000] [--scifact] [--alpha 0.8]
     [--embedder minilm|bge-small] [--floors 0.4,0.45,0.5]

No services: dense cosines from the cached vectors of the chosen local model (bench/retrieval_quality.py and
bench/beir.py fill the cache; the queries are embedded here), lexical scores as the engine
computes them (Qdrant's IDF over the agent's memories, or the SciFact corpus, times the BM25
weight), candidates the dense and the lexical top `limit` as hybrid search returns them (50 for
top_k 5, 400 for SciFact's top_k 100), then `engram_vectors.ranking.rank` and the floor exactly
as recall does. A question's filter is applied before the top `limit`, as in the engine. It
reproduces the gateway's hit@1 / hit@5 per question class and SciFact's nDCG@10 in seconds, so
fusion changes can be compared before a full run. `--floors` replays the floor choice: hybrid
hit@5 per class and the share of the 40 unrelated questions answered with nothing, per floor.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._corpus import Memory, corpus, queries, satisfies  # noqa: E402
from bench.beir import DEFAULT_DATA, embed_corpus, load, scores  # noqa: E402
from bench.retrieval_quality import AGENTS, SEED, TOP_K, embed_all, fixture_memories  # noqa: E402
from engram_embedders.local_models import make_local  # noqa: E402
from engram_embedders.onnx_text import OnnxTextEmbedder  # noqa: E402
from engram_vectors.floor import default_floor  # noqa: E402
from engram_vectors.lexical import LEXICAL_ENCODER, document_vector, query_vector  # noqa: E402
from engram_vectors.models import HybridHit  # noqa: E402
from engram_vectors.ranking import FusionSettings, Mode, floor_ranked, rank  # noqa: E402
from tests.support.models import model_dir  # noqa: E402

KINDS = ("paraphrase", "identifier", "filtered", "filtered_without_filter", "fixture")
NOW = datetime(2026, 12, 5, tzinfo=UTC)


@dataclass(frozen=True)
class Case:
    """One question as asked: its class, words, answers and the hybrid candidates."""

    kind: str
    text: str
    relevant: tuple[str, ...]
    hits: list[HybridHit]


class Index:
    """A set of texts with unit dense vectors and postings of their lexical weights."""

    def __init__(self, ids: list[str], texts: list[str], matrix: np.ndarray) -> None:
        self.ids, self.texts = ids, texts
        self.matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        self.postings: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for n, text in enumerate(texts):
            vector = document_vector(text, LEXICAL_ENCODER)
            for index, weight in zip(vector.indices, vector.values, strict=True):
                self.postings[index].append((n, weight))

    def candidates(
        self, text: str, vector: np.ndarray, allowed: set[int], limit: int
    ) -> list[HybridHit]:
        """The dense and lexical top `limit` among `allowed`, each hit with both scores."""
        cosines = self.matrix @ (vector / np.linalg.norm(vector))
        lexical: dict[int, float] = defaultdict(float)
        total = len(self.texts)
        for index in query_vector(text, LEXICAL_ENCODER).indices:
            holding = self.postings.get(index, [])
            idf = math.log(1.0 + (total - len(holding) + 0.5) / (len(holding) + 0.5))
            for n, weight in holding:
                lexical[n] += idf * weight
        dense = sorted(allowed, key=lambda n: -cosines[n])[:limit]
        shared = sorted((n for n in lexical if n in allowed), key=lambda n: -lexical[n])[:limit]
        dense_rank = {n: r for r, n in enumerate(dense, 1)}
        lexical_rank = {n: r for r, n in enumerate(shared, 1)}
        return [
            HybridHit(
                self.ids[n],
                {"content": self.texts[n]},
                float(cosines[n]),
                lexical.get(n, 0.0),
                dense_rank.get(n),
                lexical_rank.get(n),
            )
            for n in dict.fromkeys(dense + shared)
        ]


async def memory_cases(size: int, embedder: OnnxTextEmbedder) -> list[Case]:
    """retrieval_quality's questions at one size with their candidates."""
    extra, fixture_questions = fixture_memories()
    full = corpus(SEED, AGENTS, size // AGENTS)
    vectors = await embed_all([m.content for m in full + extra], embedder)
    generated = [m for m in full if int(m.memory_id.split("-")[1]) < size // AGENTS]
    asked = list(queries(generated, SEED, 240, 120))
    asked += fixture_questions
    memories = generated + extra
    by_agent: dict[int, list[Memory]] = defaultdict(list)
    for memory in memories:
        by_agent[memory.agent].append(memory)
    indexes = {
        agent: Index(
            [m.memory_id for m in mine],
            [m.content for m in mine],
            np.vstack([vectors[m.content] for m in mine]),
        )
        for agent, mine in by_agent.items()
    }
    embedded = (await embedder.embed_queries([q.text for q in asked])).vectors
    cases = []
    limit = max(50, 4 * TOP_K)
    for query, vector in zip(asked, embedded, strict=True):
        mine = by_agent[query.agent]
        for filtered in (True, False) if query.kind == "filtered" else (True,):
            allowed = {
                n
                for n, m in enumerate(mine)
                if not (filtered and query.filter)
                or satisfies({"user_id": m.user_id, "metadata": m.metadata}, query.filter)
            }
            hits = indexes[query.agent].candidates(query.text, np.asarray(vector), allowed, limit)
            kind = query.kind if filtered else "filtered_without_filter"
            cases.append(Case(kind, query.text, query.relevant, hits))
    return cases


def hit_rates(
    cases: Sequence[Case], mode: Mode, fusion: FusionSettings, floor: float
) -> dict[str, str]:
    """hit@1 (hit@5) per question class, top_k 5 and the floor."""
    found: dict[str, list[int | None]] = defaultdict(list)
    for case in cases:
        ranked = rank(case.hits, case.text, mode, fusion, now=NOW)
        kept = [item.hit.id for item in floor_ranked(ranked, floor, TOP_K).kept]
        found[case.kind].append(
            next((n for n, i in enumerate(kept, 1) if i in case.relevant), None)
        )
    return {
        kind: f"{sum(r == 1 for r in found[kind]) / len(found[kind]):.3f} "
        f"({sum(r is not None for r in found[kind]) / len(found[kind]):.3f})"
        for kind in KINDS
    }


def unanswered(cases: Sequence[Case], fusion: FusionSettings, floor: float) -> float:
    """The share of unrelated questions hybrid recall answers with nothing at this floor."""
    unrelated = [case for case in cases if case.kind == "unrelated"]
    empty = sum(
        not floor_ranked(rank(c.hits, c.text, "hybrid", fusion, now=NOW), floor, TOP_K).kept
        for c in unrelated
    )
    return empty / len(unrelated)


async def scifact(
    embedder: OnnxTextEmbedder, kind: str, data_dir: Path, fusion: FusionSettings
) -> None:
    """SciFact's nDCG@10 and recall@100 per mode, no floor."""
    data = load(data_dir, None)
    index = Index(
        list(data.docs), list(data.docs.values()), await embed_corpus(data, embedder, kind)
    )
    embedded = (await embedder.embed_queries(list(data.claims.values()))).vectors
    everything = set(range(len(index.ids)))
    hits = {
        claim: index.candidates(text, np.asarray(vector), everything, 400)
        for (claim, text), vector in zip(data.claims.items(), embedded, strict=True)
    }
    for mode in ("dense", "lexical", "hybrid"):
        rankings = {
            claim: [r.hit.id for r in rank(hits[claim], data.claims[claim], mode, fusion, now=NOW)][
                :100
            ]
            for claim in data.claims
        }
        print(f"scifact {mode:8} {scores(rankings, data.qrels)}", flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000", help="memories per corpus")
    parser.add_argument("--scifact", action="store_true", help="also SciFact (--data)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--alpha", type=float, default=FusionSettings().convex_alpha)
    parser.add_argument("--identifier-alpha", type=float, default=FusionSettings().identifier_alpha)
    parser.add_argument("--embedder", choices=("minilm", "bge-small"), default="minilm")
    parser.add_argument("--floors", default="", help="comma-separated floors to replay")
    parser.add_argument("--minilm-file", choices=("wheel", "quantized"), default="wheel")
    args = parser.parse_args()
    fusion = FusionSettings(convex_alpha=args.alpha, identifier_alpha=args.identifier_alpha)
    options: dict[str, object] = {"model_dir": model_dir()}
    if args.embedder == "minilm":
        options["file"] = args.minilm_file
    embedder = make_local(args.embedder, threads=2, **options)
    floor = default_floor(embedder.provenance.model_id)
    for size in sorted(int(s) for s in args.sizes.split(",") if s):
        cases = await memory_cases(size, embedder)
        print(f"{size}: {', '.join(KINDS)} (floor {floor})", flush=True)
        for mode in ("dense", "lexical", "hybrid"):
            print(f"{size} {mode:8} {hit_rates(cases, mode, fusion, floor)}", flush=True)
        for other in sorted(float(f) for f in args.floors.split(",") if f):
            rates = hit_rates(cases, "hybrid", fusion, other)
            empty = unanswered(cases, fusion, other)
            print(
                f"{size} floor {other}: unrelated answered with nothing {empty:.3f}, "
                f"hybrid {rates}",
                flush=True,
            )
    if args.scifact:
        await scifact(embedder, args.embedder, args.data, fusion)
    await embedder.aclose()


if __name__ == "__main__":
    asyncio.run(main())
