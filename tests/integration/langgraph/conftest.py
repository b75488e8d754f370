"""One gateway, memory and embedding service (hashing embedder) for the store's module, and
fresh agents per test so tests never see each other's namespaces."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from engram_client import AsyncEngramClient, EngramClient
from engram_langgraph import EngramStore
from tests.integration.memory.conftest import MemoryStack as SharedStack
from tests.support.tenants import create_tenant


@dataclass
class MemoryStack:
    """The gateway's URL and a tenant's key."""

    url: str
    key: str


@pytest.fixture(scope="module")
def memory_stack(shared_stack: SharedStack) -> MemoryStack:
    """The module's gateway, memory and embedding (see `shared_stack`) and a tenant on them."""
    return MemoryStack(
        shared_stack.gateway.url, create_tenant(shared_stack.gateway.env, "langgraph")
    )


@pytest.fixture(scope="module")
def client(memory_stack: MemoryStack) -> Iterator[EngramClient]:
    with EngramClient(memory_stack.url, memory_stack.key) as engram:
        yield engram


@pytest.fixture
async def async_client(memory_stack: MemoryStack) -> AsyncIterator[AsyncEngramClient]:
    async with AsyncEngramClient(memory_stack.url, memory_stack.key) as engram:
        yield engram


@pytest.fixture
def agent(client: EngramClient) -> str:
    return client.create_agent("langgraph").agent_id


@pytest.fixture
def other_agent(client: EngramClient) -> str:
    return client.create_agent("langgraph-other").agent_id


@pytest.fixture
def store(client: EngramClient) -> EngramStore:
    return EngramStore(client)


@pytest.fixture
def astore(async_client: AsyncEngramClient) -> EngramStore:
    return EngramStore(async_client=async_client)
