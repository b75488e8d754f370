"""The SciFact benchmark's scoring: BEIR's nDCG@10 and recall@100, and the engine's lexical score."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.beir import SciFact, load, ndcg_at, offline_rankings, recall_at
from engram_vectors.lexical import V1, V2

pytestmark = pytest.mark.unit


def test_ndcg_uses_the_grade_as_gain_and_the_judged_ideal() -> None:
    judged = {"a": 1, "b": 1}
    assert ndcg_at(["a", "b", "x"], judged) == pytest.approx(1.0)
    assert ndcg_at(["x", "a"], judged) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert ndcg_at(["x"], judged) == 0.0


def test_recall_counts_relevant_documents_within_k() -> None:
    assert recall_at(["a", "x"], {"a": 1, "b": 1}) == 0.5
    assert recall_at(["x"] * 100 + ["a"], {"a": 1}) == 0.0


def test_offline_ranking_puts_the_document_sharing_rare_terms_first() -> None:
    data = SciFact(
        docs={
            "d1": "Mitochondrial proteins regulate apoptosis in neurons.",
            "d2": "Neurons fire.",
            "d3": "Cells divide and proteins fold.",
        },
        claims={"q": "apoptosis is regulated by mitochondrial proteins"},
        qrels={"q": {"d1": 1}},
    )
    for encoder in (V1.id, V2.id):
        assert offline_rankings(data, encoder)["q"][0] == "d1"


def test_load_reads_corpus_claims_and_judgements(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        json.dumps({"_id": "d1", "title": "T", "text": "body"}) + "\n", encoding="utf-8"
    )
    (tmp_path / "queries.jsonl").write_text(
        "\n".join(json.dumps({"_id": q, "text": f"claim {q}"}) for q in ("1", "2")) + "\n",
        encoding="utf-8",
    )
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n2\td1\t1\n1\td1\t2\n", encoding="utf-8"
    )
    data = load(tmp_path, None)
    assert data.docs == {"d1": "T body"}
    assert data.claims == {"2": "claim 2", "1": "claim 1"}
    assert data.qrels == {"2": {"d1": 1}, "1": {"d1": 2}}
    assert list(load(tmp_path, 1).claims) == ["2"]
