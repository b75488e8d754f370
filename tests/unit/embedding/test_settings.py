"""The embedding service runs MiniLM in a child process, optionally pinned, as configured."""

from __future__ import annotations

import pytest

from engram_embedders.model_process import ProcessModelEmbedder
from engram_embedding.config import EmbeddingSettings
from engram_embedding.main import embedding_requests
from engram_platform.metrics import PipelineMetrics

pytestmark = pytest.mark.unit


def test_minilm_runs_in_its_own_process_unless_told_otherwise() -> None:
    assert EmbeddingSettings(embedder="minilm").embedder_options() == {
        "threads": 1,
        "model_dir": None,
        "file": "quantized",
        "batch_size": 64,
        "own_process": True,
        "cpus": None,
    }
    in_process = EmbeddingSettings(minilm_own_process=False).embedder_options()
    assert "own_process" not in in_process and "cpus" not in in_process


def test_model_cpus_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDING_MINILM_CPUS", "[1]")
    assert EmbeddingSettings().embedder_options()["cpus"] == frozenset({1})


def test_the_bulk_lane_gets_a_model_process_of_its_own_at_a_lower_priority() -> None:
    options = EmbeddingSettings(embedder="minilm").bulk_embedder_options()
    assert options == {**EmbeddingSettings(embedder="minilm").embedder_options(), "nice": 10}
    assert EmbeddingSettings(bulk_model_process=False).bulk_embedder_options() is None
    assert EmbeddingSettings(bulk_model_nice=3).bulk_embedder_options() == {
        **EmbeddingSettings().embedder_options(),
        "nice": 3,
    }


@pytest.mark.parametrize(
    "settings",
    [
        EmbeddingSettings(embedder="hashing"),
        EmbeddingSettings(embedder="minilm", minilm_own_process=False),
    ],
    ids=["no local model", "model in the service's process"],
)
def test_without_a_model_process_both_lanes_share_the_embedder(settings: EmbeddingSettings) -> None:
    assert settings.bulk_embedder_options() is None


def test_the_service_embeds_its_bulk_lane_on_a_model_process_of_its_own() -> None:
    requests = embedding_requests(EmbeddingSettings(embedder="minilm"), PipelineMetrics("probe"))
    assert isinstance(requests.embedder, ProcessModelEmbedder) and requests.embedder.nice == 0
    assert isinstance(requests.bulk_embedder, ProcessModelEmbedder)
    assert requests.bulk_embedder is not requests.embedder and requests.bulk_embedder.nice == 10
    hashing = embedding_requests(EmbeddingSettings(embedder="hashing"), PipelineMetrics("probe"))
    assert hashing.bulk_embedder is None
