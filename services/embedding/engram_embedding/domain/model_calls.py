"""Model calls: a bulk load's texts cut so that no call holds the model for long."""

from __future__ import annotations

from typing import TypeVar

from engram_events.payloads.embeddings import TextItem

T = TypeVar("T")


def model_calls(
    wanted: list[tuple[T, TextItem]],
    batch_size: int,
    max_chars: int | None,
) -> list[list[tuple[T, TextItem]]]:
    """The texts in model calls of at most `batch_size` texts and, when set, `max_chars`
    characters (a longer text goes alone): a call's cost grows with its text, not its count."""
    calls: list[list[tuple[T, TextItem]]] = []
    chars = 0
    for entry in wanted:
        size = len(entry[1].text)
        full = bool(calls) and (
            len(calls[-1]) >= batch_size or (max_chars is not None and chars + size > max_chars)
        )
        if not calls or full:
            calls.append([])
            chars = 0
        calls[-1].append(entry)
        chars += size
    return calls
