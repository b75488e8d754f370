"""Input is refused before any model or network work, with the index and never the text."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from engram_embedders import HashingEmbedder, InvalidEmbeddingInput, validate_texts

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("texts", "index"),
    [
        ([], None),
        ([""], 0),
        (["fine", "   "], 1),
        (["fine", "also fine", "\n\t \u00a0"], 2),
        (["fine", 3], 1),
        ("a bare string", None),
    ],
)
def test_invalid_batches_name_the_offending_index(texts: Sequence[str], index: int | None) -> None:
    with pytest.raises(InvalidEmbeddingInput) as refused:
        validate_texts(texts)
    assert refused.value.index == index
    assert isinstance(refused.value, ValueError)


def test_the_message_never_echoes_the_text() -> None:
    secret = "canary-7f3a   "
    with pytest.raises(InvalidEmbeddingInput) as refused:
        validate_texts(["ok", secret.strip(), "  "])
    assert "canary" not in str(refused.value)
    assert "index 2" in str(refused.value)


async def test_hashing_embedder_validates_before_embedding() -> None:
    embedder = HashingEmbedder()
    with pytest.raises(InvalidEmbeddingInput):
        await embedder.embed(["good", ""])
    with pytest.raises(InvalidEmbeddingInput):
        embedder.embed_sync([])
