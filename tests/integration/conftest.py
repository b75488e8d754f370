"""Integration tier: real processes over the real broker and database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.services import ServiceProcess, free_port


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/integration is marked `integration`."""
    for item in items:
        if "tests/integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def service(stack_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., ServiceProcess]]:
    """Factory: `service("ingest", **env)` starts a process; all are stopped after the test."""
    started: list[ServiceProcess] = []

    def make(name: str, *, start: bool = True, **extra: str) -> ServiceProcess:
        proc = ServiceProcess(name, {**stack_env, **extra}, free_port(), tmp_path / "logs")
        started.append(proc)
        return proc.start() if start else proc

    yield make
    for proc in started:
        proc.stop()
