"""bge-small-en-v1.5 int8 on onnxruntime: the files `make models` fetched, no mocks.

The expected values were computed by running the ONNX file with onnxruntime directly (the
tokenizer's own encoding, the [CLS] state, L2 norm); mean pooling or a missing query
instruction gives other numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engram_embedders import (
    BgeSmallEmbedder,
    InvalidEmbeddingInput,
    MiniLMEmbedder,
    ModelFilesMissing,
    make_embedder,
)
from engram_embedders.bge import BGE_QUERY_PREFIX, BGE_SMALL_FP32, KNOWN_INT8_WEIGHTS_SHA256
from engram_embedders.digest import sha256_file
from engram_embedders.settings import EmbedderSettings
from tests.support.models import model_dir

pytestmark = pytest.mark.unit

CAT = "The cat sits on the mat"
KITTEN = "A kitten is resting on a rug"
TAX = "Quarterly tax filing deadline"
QUERY = "where does the cat sleep?"

EXPECTED_HEADS = {
    CAT: [0.03487, -0.01838, 0.00735, 0.05109, -0.02594, -0.01486],
    KITTEN: [-0.01164, 0.00519, 0.06738, 0.10426, 0.01271, -0.00933],
    TAX: [-0.07243, -0.02674, 0.02758, -0.03378, 0.00329, 0.00179],
    BGE_QUERY_PREFIX + QUERY: [0.03961, -0.02494, 0.00664, 0.11020, 0.01417, 0.02358],
}
"""The first six dimensions of each unit vector, from onnxruntime run by hand on the int8 file."""


def _model_dir() -> Path:
    return model_dir()


@pytest.fixture(scope="module")
def bge() -> Iterator[BgeSmallEmbedder]:
    embedder = BgeSmallEmbedder(threads=1, model_dir=_model_dir())
    embedder.load()
    yield embedder


def test_provenance_names_bge_and_the_digest_of_the_file_loaded(bge: BgeSmallEmbedder) -> None:
    weights = _model_dir() / "bge-small-en-v1.5-int8" / "model.onnx"
    provenance = bge.provenance
    assert provenance.weights_sha256 == sha256_file(weights) == KNOWN_INT8_WEIGHTS_SHA256
    assert provenance.model_id == "BAAI/bge-small-en-v1.5"
    assert (provenance.dimension, provenance.normalized, provenance.precision) == (
        384,
        True,
        "int8",
    )


def test_vectors_match_onnxruntime_run_by_hand(bge: BgeSmallEmbedder) -> None:
    for text, head in EXPECTED_HEADS.items():
        (vector,) = bge.embed_sync([text]).vectors
        assert np.allclose(vector[:6], head, atol=2e-4), text
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_a_batch_moves_a_vector_only_slightly(bge: BgeSmallEmbedder) -> None:
    """Dynamic int8 quantizes activations per batch (padding included), so a text's vector
    depends a little on its neighbours; retrieval must not notice."""
    alone = np.vstack([bge.embed_sync([text]).vectors for text in EXPECTED_HEADS])
    batched = bge.embed_sync(list(EXPECTED_HEADS)).vectors
    assert (alone * batched).sum(axis=1).min() >= 0.99


def test_only_queries_carry_the_instruction(bge: BgeSmallEmbedder) -> None:
    as_query = bge.embed_sync([QUERY], queries=True).vectors[0]
    as_document = bge.embed_sync([QUERY]).vectors[0]
    prefixed = bge.embed_sync([BGE_QUERY_PREFIX + QUERY]).vectors[0]
    assert np.allclose(as_query, prefixed, atol=1e-6)
    assert float(as_query @ as_document) < 0.99


async def test_async_queries_and_documents_match_sync(bge: BgeSmallEmbedder) -> None:
    documents = await bge.embed([CAT, TAX])
    queries = await bge.embed_queries([QUERY])
    assert np.allclose(documents.vectors, bge.embed_sync([CAT, TAX]).vectors, atol=1e-6)
    assert np.allclose(queries.vectors, bge.embed_sync([QUERY], queries=True).vectors, atol=1e-6)
    assert documents.provenance == queries.provenance == bge.provenance


def test_a_query_ranks_the_passage_that_answers_it_first(bge: BgeSmallEmbedder) -> None:
    query = bge.embed_sync([QUERY], queries=True).vectors[0]
    cat, kitten, tax = bge.embed_sync([CAT, KITTEN, TAX]).vectors
    assert query @ cat > query @ tax + 0.15
    assert query @ kitten > query @ tax + 0.15
    assert cat @ kitten > cat @ tax + 0.3


def test_long_text_is_truncated_to_512_tokens(bge: BgeSmallEmbedder) -> None:
    head = " ".join(f"word{i}" for i in range(700))
    vectors = bge.embed_sync([head, head + " and an entirely different ending"]).vectors
    assert np.allclose(vectors[0], vectors[1], atol=1e-5)


def test_int8_stays_close_to_the_fp32_file() -> None:
    if not (_model_dir() / BGE_SMALL_FP32 / "model.onnx").is_file():
        pytest.skip(
            "fp32 file not fetched: python -m engram_devstack models bge-small-en-v1.5-fp32"
        )
    texts = [CAT, KITTEN, TAX, "ok", "Carrier c1 changed its insurance provider in March. " * 8]
    int8 = BgeSmallEmbedder(model_dir=_model_dir()).embed_sync(texts).vectors
    full = BgeSmallEmbedder(model_dir=_model_dir(), variant=BGE_SMALL_FP32)
    assert full.provenance.precision == "fp32"
    cosines = (int8 * full.embed_sync(texts).vectors).sum(axis=1)
    assert cosines.min() >= 0.97


def test_invalid_input_is_refused_before_the_model_runs() -> None:
    embedder = BgeSmallEmbedder(model_dir=_model_dir())
    with pytest.raises(InvalidEmbeddingInput):
        embedder.embed_sync(["fine", "   "], queries=True)
    assert not embedder.is_loaded


def test_missing_files_say_how_to_fetch_them(tmp_path: Path) -> None:
    with pytest.raises(ModelFilesMissing, match="make models"):
        BgeSmallEmbedder(model_dir=tmp_path).load()


def test_each_file_is_its_own_vector_space(bge: BgeSmallEmbedder) -> None:
    """Mixed-space refusal compares fingerprints: bge, its fp32 file and MiniLM all differ."""
    minilm = MiniLMEmbedder().provenance
    assert bge.provenance.fingerprint != minilm.fingerprint
    if (_model_dir() / BGE_SMALL_FP32 / "model.onnx").is_file():
        full = BgeSmallEmbedder(model_dir=_model_dir(), variant=BGE_SMALL_FP32).provenance
        assert full.fingerprint != bge.provenance.fingerprint


def test_settings_choose_bge_and_pass_the_model_dir() -> None:
    settings = EmbedderSettings(embedder="bge-small", minilm_threads=2, model_dir="/models")
    assert settings.embedder_options() == {"threads": 2, "model_dir": "/models"}
    assert isinstance(
        make_embedder(settings.embedder, **settings.embedder_options()), BgeSmallEmbedder
    )
