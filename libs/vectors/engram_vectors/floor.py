"""The recall floor: a default per embedder model, applied to the raw top-k, drops counted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

DEFAULT_FLOORS: dict[str, float] = {
    "sentence-transformers/all-MiniLM-L6-v2": 0.25,
    "BAAI/bge-small-en-v1.5": 0.48,
    "engram-hashing-v1": 0.05,
}
"""The lowest answer score on tests/fixtures/retrieval, rounded down to 0.05 (see
services/memory/README.md); memory recall and knowledge search share them.

MiniLM: answers score 0.27-0.83 (p5 0.39); 0.25 keeps every answer and drops 93% of
non-answers. bge-small: its cosines sit higher (unrelated texts ~0.35-0.45); answers score
0.54-0.85 (p5 0.56), so up to 0.50 keeps every answer; 0.48 was taken from the replayed 10k
benchmark (docs/performance.md), where 0.50 answered 88% of unrelated questions with nothing
but cut filtered hit@5 to 0.56, and 0.48 gives 0.75 and 0.68 (MiniLM at 0.25: 0.83, 0.79).
Hashing: answers score from 0.09; 0.05 keeps every answer (it separates poorly).
"""
FALLBACK_FLOOR = 0.30


def default_floor(model_id: str) -> float:
    """The floor for a model; hashing model ids carry their dimension as a suffix."""
    for prefix, floor in DEFAULT_FLOORS.items():
        if model_id == prefix or model_id.startswith(f"{prefix}-"):
            return floor
    return FALLBACK_FLOOR


def chosen_floor(requested: float | None, configured: float | None, model_id: str) -> float:
    """The caller's floor, else the configured one, else the embedder model's default."""
    if requested is not None:
        return requested
    if configured is not None:
        return configured
    return default_floor(model_id)


@dataclass(frozen=True)
class Floored(Generic[T]):
    """What survives the floor, and how many of the raw top-k it dropped."""

    kept: list[tuple[T, float]]
    dropped: int


def apply_floor(scored: Sequence[tuple[T, float]], floor: float) -> Floored[T]:
    """Keep hits scoring at least `floor`; `dropped` counts raw top-k hits below it."""
    kept = [(item, score) for item, score in scored if score >= floor]
    return Floored(kept=kept, dropped=len(scored) - len(kept))
