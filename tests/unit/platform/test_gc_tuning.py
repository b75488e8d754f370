"""A started service freezes what start-up built and collects its young objects less often."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from engram_platform.gc_tuning import OLDER_THRESHOLDS, tune_after_start
from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit


@pytest.fixture
def restored_gc() -> Iterator[None]:
    """The interpreter's collector is process-wide: put it back for the other tests."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_tuning_freezes_the_start_up_heap_and_raises_the_young_threshold(
    restored_gc: None,
) -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    assert tune_after_start(12_345) == (12_345, *OLDER_THRESHOLDS)
    assert gc.get_threshold() == (12_345, *OLDER_THRESHOLDS)
    assert gc.get_freeze_count() > 0, "start-up objects are out of every later collection"


def test_zero_keeps_the_interpreter_defaults(restored_gc: None) -> None:
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    assert tune_after_start(0) == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_services_tune_by_default_and_the_setting_can_turn_it_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert ServiceSettings().gc_young_threshold == 200_000
    monkeypatch.setenv("ENGRAM_GC_YOUNG_THRESHOLD", "0")
    assert ServiceSettings().gc_young_threshold == 0
