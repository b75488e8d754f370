"""Recall@5 on the hand-written fixture, with MiniLM, bge-small and the hashing embedder."""

from __future__ import annotations

import pytest

from engram_embedders import EmbedderKind, make_embedder
from engram_vectors.floor import default_floor
from tests.fixtures.retrieval.quality import Quality, describe, load_fixture, measure
from tests.support.models import model_dir

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def measured() -> dict[str, Quality]:
    """Each embedder's recall on the fixture, measured once for the tests that read it."""
    return {}


async def quality_of(kind: EmbedderKind, measured: dict[str, Quality]) -> Quality:
    if kind not in measured:
        options = {"model_dir": model_dir()} if kind == "bge-small" else {}
        embedder = make_embedder(kind, **options)
        measured[kind] = await measure(embedder, k=5)
        await embedder.aclose()
    return measured[kind]


def test_fixture_is_big_enough() -> None:
    data = load_fixture()
    assert len(data["memories"]) >= 50 and len(data["queries"]) >= 20
    ids = {m["id"] for m in data["memories"]}
    assert all(set(q["relevant"]) <= ids for q in data["queries"])


@pytest.mark.parametrize("kind, minimum", [("minilm", 0.9), ("bge-small", 0.9), ("hashing", 0.4)])
async def test_recall_at_5(
    kind: EmbedderKind, minimum: float, measured: dict[str, Quality]
) -> None:
    quality = await quality_of(kind, measured)
    print(describe(quality))
    assert quality.recall_at_k >= minimum


@pytest.mark.parametrize("kind", ["minilm", "bge-small", "hashing"])
async def test_default_floor_keeps_the_fixture_answers(
    kind: EmbedderKind, measured: dict[str, Quality]
) -> None:
    quality = await quality_of(kind, measured)
    floor = default_floor(quality.model_id)
    kept = sum(score >= floor for score in quality.answer_scores) / len(quality.answer_scores)
    assert kept >= 0.97
