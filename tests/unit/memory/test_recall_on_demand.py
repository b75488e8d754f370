"""Recall reads payloads only where they decide the answer; the answer is the one reading every
candidate's payload gives, in every mode, at any floor, for queries with and without identifiers,
and a payload outside the scope sends the recall down the whole path."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from engram_embedders import HashingEmbedder
from engram_memory.adapters.vectors import MemoryVectors
from engram_memory.domain.rows import MemoryRow
from engram_memory.service.recall import Ranking, Recall, Scope, Search
from engram_vectors import ExactNumpyStore, HybridHit
from engram_vectors.ranking import Mode, Ranked

pytestmark = pytest.mark.unit

WORDS = "invoice delivery warehouse contract refund seat coffee audit export desk".split()
AGENTS = ("agt_a", "agt_b")


class WholeRecall(Recall):
    """Recall that always reads every candidate's payload (the path before on-demand reads)."""

    async def _ranked_on_demand(
        self, search: Search, scope: Scope, ranking: Ranking, floor: float, top_k: int
    ) -> tuple[int, list[Ranked]] | None:
        return None


class Trespassing(MemoryVectors):
    """A collection whose payload reads answer another agent's memory (a filter gone wrong)."""

    async def hit_payloads(self, hits: Sequence[HybridHit]) -> dict[str, HybridHit]:
        read = await super().hit_payloads(hits)
        return {
            key: HybridHit(
                hit.id,
                {**hit.payload, "agent_id": "agt_other"},
                hit.dense,
                hit.lexical,
                hit.dense_rank,
                hit.lexical_rank,
            )
            for key, hit in read.items()
        }


def memory(n: int, agent: str) -> MemoryRow:
    rng = random.Random(n)
    words = " ".join(rng.sample(WORDS, 3))
    return MemoryRow(
        tenant_id="tnt_a",
        memory_id=f"mem_{n:04d}",
        agent_id=agent,
        status="active",
        type="fact",
        content_sha256="0" * 64,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        content=f"{words} ref ORD-{1000 + n % 40} note {n}",
    )


async def filled(
    points: type[MemoryVectors] = MemoryVectors,
) -> tuple[HashingEmbedder, MemoryVectors]:
    embedder = HashingEmbedder()
    store = ExactNumpyStore()
    vectors = points(store, "memories")
    provenance = {
        **embedder.provenance.model_dump(),
        "fingerprint": embedder.provenance.fingerprint,
    }
    await vectors.open(embedder.provenance.dimension, embedder.provenance.fingerprint)
    rows = [memory(n, AGENTS[n % 2]) for n in range(240)]
    embedded = await embedder.embed([str(row.content) for row in rows])
    await vectors.put_many(
        [(row, vector, "active") for row, vector in zip(rows, embedded.vectors, strict=True)],
        provenance,
    )
    return embedder, vectors


QUERIES = (
    "invoice refund",
    "ORD-1007",
    "warehouse ORD-1012 delivery",
    "coffee desk note 31",
    "zzz",
)


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
@pytest.mark.parametrize("floor", [None, -1.0, 0.2, 0.6])
async def test_reading_payloads_on_demand_answers_as_reading_them_all(
    mode: Mode, floor: float | None
) -> None:
    embedder, vectors = await filled()
    lazy, whole = Recall(embedder, vectors), WholeRecall(embedder, vectors)
    for query in QUERIES:
        for top_k in (1, 5, 30):
            ours = await lazy.recall("tnt_a", "agt_a", query, top_k, min_score=floor, mode=mode)
            theirs = await whole.recall("tnt_a", "agt_a", query, top_k, min_score=floor, mode=mode)
            assert ours == theirs, (query, top_k)
            assert all(hit["memory_id"] for hit in ours.results)


async def test_a_payload_read_outside_the_scope_falls_back_to_the_whole_path() -> None:
    embedder, vectors = await filled(Trespassing)
    found = await Recall(embedder, vectors).recall("tnt_a", "agt_a", "invoice refund", 5)
    assert found.results
    assert all(hit["memory_id"].startswith("mem_") for hit in found.results)
    assert all(int(hit["memory_id"][4:]) % 2 == 0 for hit in found.results)
