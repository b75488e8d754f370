"""The provenance fingerprint decides which vectors may be compared."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from engram_embedders import Embeddings, Provenance

pytestmark = pytest.mark.unit

BASE = Provenance(
    provider="sentence-transformers",
    model_id="sentence-transformers/all-MiniLM-L6-v2",
    weights_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    dimension=384,
    normalized=True,
    precision="int8",
)


def test_fingerprint_is_pinned_so_stored_collections_stay_readable() -> None:
    assert BASE.fingerprint == "0141102ea4a144a05251853506a1763f182e06560fcfece85ef13be113367e4a"


@pytest.mark.parametrize(
    "change",
    [
        {"provider": "other"},
        {"model_id": "other"},
        {"weights_sha256": "0" * 64},
        {"dimension": 383},
        {"normalized": False},
    ],
)
def test_every_identity_field_changes_the_fingerprint(change: dict[str, object]) -> None:
    assert BASE.model_copy(update=change).fingerprint != BASE.fingerprint


def test_precision_is_reported_but_implied_by_the_weights_digest() -> None:
    assert BASE.model_copy(update={"precision": "fp32"}).fingerprint == BASE.fingerprint


def test_provenance_is_frozen_and_round_trips_with_its_fingerprint() -> None:
    mutable: Any = BASE
    with pytest.raises(ValidationError):
        mutable.dimension = 3
    dumped = BASE.model_dump()
    assert dumped["fingerprint"] == BASE.fingerprint
    assert Provenance.model_validate(dumped) == BASE
    assert Provenance.model_validate({**dumped, "fingerprint": "stale"}).fingerprint == (
        BASE.fingerprint
    )


def test_embeddings_must_match_the_provenance_dimension() -> None:
    import numpy as np

    with pytest.raises(ValueError):
        Embeddings(vectors=np.zeros((1, 3), dtype=np.float32), provenance=BASE)
    with pytest.raises(ValueError):
        Embeddings(vectors=np.zeros((1, 384), dtype=np.float64), provenance=BASE)
