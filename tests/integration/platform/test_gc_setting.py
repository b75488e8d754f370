"""A started service applies the collector setting (and says so in its start-up log line)."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.support.services import ServiceProcess


def _started_lines(process: ServiceProcess) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in process.logs().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("msg") == "started"]


def test_a_started_service_collects_young_objects_at_the_configured_threshold(
    service: Callable[..., ServiceProcess],
) -> None:
    tuned = service("ingest", ENGRAM_LOG_LEVEL="INFO", ENGRAM_GC_YOUNG_THRESHOLD="123456")
    untouched = service("extraction", ENGRAM_LOG_LEVEL="INFO", ENGRAM_GC_YOUNG_THRESHOLD="0")
    assert [line["gc_thresholds"] for line in _started_lines(tuned)] == [[123456, 20, 20]]
    assert [line["gc_thresholds"] for line in _started_lines(untouched)] == [[700, 10, 10]]
