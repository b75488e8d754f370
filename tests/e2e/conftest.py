"""The e2e tier: the whole platform as separate processes, driven through the gateway."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import Infra
from tests.support.platform import Platform, start_platform, stop_platform


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/e2e is marked `e2e`."""
    for item in items:
        if "tests/e2e" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="module")
def platform(infra: Infra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """One platform per test module."""
    running = start_platform(infra, tmp_path_factory.mktemp("platform"))
    try:
        yield running
    finally:
        stop_platform(running)
