"""The stub gateway and fast retry settings the client's unit tests share."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram_client import RetryPolicy
from tests.unit.client.stub import StubServer, running_stub


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with running_stub() as server:
        yield server


@pytest.fixture
def fast_retry() -> RetryPolicy:
    """Real backoff with tiny delays, seeded so runs repeat."""
    return RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05, rng=random.Random(7))


@pytest.fixture
def env_file(tmp_path: Path, stub: StubServer) -> Path:
    """A run.env pointing the CLI at the stub."""
    path = tmp_path / "run.env"
    path.write_text(f"ENGRAM_URL={stub.url}\nENGRAM_API_KEY=egk_cli_key\n")
    return path
