"""The store contract against the in-memory fake Engram (sync and async)."""

from __future__ import annotations

import pytest

from engram_langgraph import EngramStore
from tests.support.store_contract import AsyncStoreContract, StoreContract
from tests.unit.langgraph.fake_engram import AsyncFakeEngram, FakeEngram

pytestmark = pytest.mark.unit


@pytest.fixture
def engram() -> FakeEngram:
    return FakeEngram()


@pytest.fixture
def store(engram: FakeEngram) -> EngramStore:
    return EngramStore(engram)


@pytest.fixture
def astore(engram: FakeEngram) -> EngramStore:
    return EngramStore(async_client=AsyncFakeEngram(engram))


@pytest.fixture
def agent() -> str:
    return "agt_a"


@pytest.fixture
def other_agent() -> str:
    return "agt_b"


class TestContractOnTheFake(StoreContract):
    """Every contract test, the fake standing in for the gateway."""


class TestAsyncContractOnTheFake(AsyncStoreContract):
    """The awaited methods, the fake standing in for the async client."""
