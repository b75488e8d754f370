"""Input checks that run before any model or network work is paid for."""

from __future__ import annotations

from collections.abc import Sequence

from engram_embedders.errors import InvalidEmbeddingInput


def validate_texts(texts: Sequence[str]) -> list[str]:
    """Refuse a bare string, an empty batch, non-strings, and empty or whitespace-only texts."""
    if isinstance(texts, str | bytes):
        raise InvalidEmbeddingInput("expected a sequence of strings, got a single string")
    checked = list(texts)
    if not checked:
        raise InvalidEmbeddingInput("no texts given")
    for index, text in enumerate(checked):
        if not isinstance(text, str):
            raise InvalidEmbeddingInput(f"expected str, got {type(text).__name__}", index)
        if not text:
            raise InvalidEmbeddingInput("empty text", index)
        if not text.strip():
            raise InvalidEmbeddingInput("whitespace-only text", index)
    return checked
