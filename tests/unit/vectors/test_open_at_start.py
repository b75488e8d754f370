"""A service's collection at start-up: a lexical mismatch stops it with the remedy logged;
another embedder's collection only warns."""

from __future__ import annotations

import logging

import pytest

from engram_vectors import LexicalMismatch
from engram_vectors.opening import open_at_start

pytestmark = pytest.mark.unit


async def refuse(dimension: int, fingerprint: str) -> str:
    raise LexicalMismatch("memories", "bm25", None)


async def foreign(dimension: int, fingerprint: str) -> str:
    return "other-embedder"


async def test_a_lexical_mismatch_stops_start_up_naming_the_remedy(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.raises(LexicalMismatch), caplog.at_level(logging.ERROR):
        await open_at_start(
            refuse, 8, "fp", collection="memories", remedy="set THE_SETTING", reader="recall"
        )
    assert "set THE_SETTING" in caplog.text


async def test_another_embedders_collection_is_warned_of_and_opened(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        await open_at_start(foreign, 8, "fp", collection="memories", remedy="-", reader="recall")
    assert "recall will refuse" in caplog.text
