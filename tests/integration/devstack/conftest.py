"""Fixtures for the dev stack's own tests: free ports, a temporary state dir, the shared cache."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram_devstack import FerretServer, KafkaServer, Layout, free_ports


@pytest.fixture(scope="session")
def cache_dir() -> Path:
    """The checkout's cache, so tests download and build at most once per machine."""
    return Layout.discover().cache_dir


@pytest.fixture
def kafka(tmp_path: Path, cache_dir: Path) -> Iterator[KafkaServer]:
    port, controller_port = free_ports(2)
    server = KafkaServer(tmp_path / "state", port, controller_port, cache_dir=cache_dir)
    server.ensure_installed()
    yield server
    server.stop()


@pytest.fixture
def ferret(tmp_path: Path, cache_dir: Path) -> Iterator[FerretServer]:
    server = FerretServer(tmp_path / "state", free_ports(1)[0], cache_dir=cache_dir)
    server.ensure_installed()
    yield server
    server.stop()
