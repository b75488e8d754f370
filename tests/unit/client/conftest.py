"""The stub gateway and fast retry settings the client's unit tests share."""

from __future__ import annotations

import random
from collections.abc import Iterator

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
