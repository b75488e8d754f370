"""Model calls: a bulk load's texts go to the model in calls bounded by their characters."""

import pytest

from engram_embedding.domain.model_calls import model_calls
from engram_events.payloads.embeddings import TextItem

pytestmark = pytest.mark.unit


def texts(*sizes: int) -> list[tuple[int, TextItem]]:
    return [(n, TextItem(item_id=f"i{n}", text="x" * size)) for n, size in enumerate(sizes)]


def sizes(calls: list[list[tuple[int, TextItem]]]) -> list[list[int]]:
    return [[len(item.text) for _, item in call] for call in calls]


def test_calls_are_cut_at_the_character_budget_and_a_long_text_goes_alone() -> None:
    calls = model_calls(texts(400, 400, 400, 900, 2000, 100, 100), 64, 1000)
    assert sizes(calls) == [[400, 400], [400], [900], [2000], [100, 100]]


def test_the_text_count_still_bounds_a_call() -> None:
    calls = model_calls(texts(*[10] * 7), 3, 1000)
    assert sizes(calls) == [[10] * 3, [10] * 3, [10]]


def test_without_a_budget_only_the_count_cuts() -> None:
    assert sizes(model_calls(texts(5000, 5000, 5000), 2, None)) == [[5000, 5000], [5000]]
    assert model_calls([], 2, 10) == []
