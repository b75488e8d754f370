"""The embedding service runs MiniLM in a child process, optionally pinned, as configured."""

from __future__ import annotations

import pytest

from engram_embedding.config import EmbeddingSettings

pytestmark = pytest.mark.unit


def test_minilm_runs_in_its_own_process_unless_told_otherwise() -> None:
    assert EmbeddingSettings(embedder="minilm").embedder_options() == {
        "threads": 1,
        "model_dir": None,
        "file": "wheel",
        "batch_size": 64,
        "own_process": True,
        "cpus": None,
    }
    in_process = EmbeddingSettings(minilm_own_process=False).embedder_options()
    assert "own_process" not in in_process and "cpus" not in in_process


def test_model_cpus_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDING_MINILM_CPUS", "[1]")
    assert EmbeddingSettings().embedder_options()["cpus"] == frozenset({1})
