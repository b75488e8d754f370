"""A publish the broker refuses becomes the retryable 503 every queuing route answers."""

from __future__ import annotations

import pytest

from engram_gateway.service.intake import publish_or_503
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit


async def _refused() -> None:
    raise ConnectionError("no broker")


async def _taken(log: list[str]) -> None:
    log.append("published")


async def test_a_broker_failure_is_a_503_with_the_routes_message() -> None:
    with pytest.raises(Problem) as caught:
        await publish_or_503(_refused(), "the import could not be queued; retry")
    problem = caught.value
    assert (problem.status, problem.kind) == (503, "broker-unavailable")
    assert problem.detail == "the import could not be queued; retry"
    assert problem.__cause__ is None and problem.__suppress_context__


async def test_a_taken_publish_is_awaited_and_answers_nothing() -> None:
    log: list[str] = []
    await publish_or_503(_taken(log), "unused")
    assert log == ["published"]
