"""The hashing embedder is deterministic everywhere and reports its own parameters."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from engram_embedders import HashingEmbedder, make_embedder

pytestmark = pytest.mark.unit


def test_same_text_gives_the_same_unit_vector() -> None:
    first = HashingEmbedder().embed_sync(["The cat sits on the mat", "x"]).vectors
    again = HashingEmbedder().embed_sync(["The cat sits on the mat"]).vectors
    assert first.dtype == np.float32
    assert first.shape == (2, 384)
    assert np.array_equal(first[0], again[0])
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)


def test_vectors_do_not_depend_on_the_process_hash_seed() -> None:
    script = (
        "from engram_embedders import HashingEmbedder;"
        "print(HashingEmbedder().embed_sync(['Hello engram world']).vectors[0][:16].tolist())"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            stdout=subprocess.PIPE,
            text=True,
        )
        for seed in ("1", "2")
    ]
    outputs = {run.communicate(timeout=60)[0] for run in runs}
    assert [run.returncode for run in runs] == [0, 0]
    assert len(outputs) == 1


def test_provenance_is_derived_from_the_parameters() -> None:
    embedder = HashingEmbedder(dimension=64, trigram_weight=0.25)
    provenance = embedder.provenance
    parameters = {
        "algorithm": "engram-hashing-v1",
        "dimension": 64,
        "token_pattern": r"\w+",
        "trigram_weight": 0.25,
    }
    expected = hashlib.sha256(
        json.dumps(parameters, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    assert provenance.provider == "engram"
    assert provenance.model_id == "engram-hashing-v1-64"
    assert provenance.weights_sha256 == expected
    assert provenance.dimension == 64
    assert provenance.normalized is True
    assert embedder.embed_sync(["a"]).provenance == provenance
    assert HashingEmbedder(dimension=64).provenance.fingerprint != provenance.fingerprint


def test_shared_words_score_higher_than_unrelated_text() -> None:
    vectors = (
        HashingEmbedder()
        .embed_sync(
            ["the cat sat on the mat", "a cat sat on a mat", "quarterly tax filing deadline"]
        )
        .vectors
    )
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3


def test_text_without_words_still_embeds() -> None:
    vectors = HashingEmbedder().embed_sync(["!!!", "?!"]).vectors
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert not np.array_equal(vectors[0], vectors[1])


async def test_factory_builds_a_hashing_embedder() -> None:
    embedder = make_embedder("hashing", dimension=32)
    result = await embedder.embed(["hello"])
    assert result.vectors.shape == (1, 32)
    assert result.provenance == embedder.provenance
    await embedder.aclose()
    unknown: Any = "word2vec"
    with pytest.raises(ValueError):
        make_embedder(unknown)
