"""One gateway, memory and embedding service (hashing embedder) for the store's module, and
fresh agents per test so tests never see each other's namespaces."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from engram_client import AsyncEngramClient, EngramClient
from engram_devstack import free_port
from engram_langgraph import EngramStore
from tests.conftest import Infra
from tests.support.retries import fast_retries
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant


@dataclass
class MemoryStack:
    """The gateway's URL and a tenant's key."""

    url: str
    key: str


@pytest.fixture(scope="module")
def memory_stack(infra: Infra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStack]:
    """Gateway, memory and embedding on fresh topics and databases, stopped after the module."""
    root: Path = tmp_path_factory.mktemp("langgraph")
    tag = uuid.uuid4().hex[:10]
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": infra.bootstrap,
        "MONGODB_URI": infra.mongodb_uri,
        **infra.qdrant_env(),
        "ENGRAM_TOPIC_PREFIX": f"t{tag}.",
        "ENGRAM_DATABASE_PREFIX": f"t{tag}_",
        **fast_retries(0.05, 0.2),
        "ENGRAM_TOPIC_PARTITIONS": "1",
        "ENGRAM_EMBEDDING_EMBEDDER": "hashing",
        "ENGRAM_MEMORY_EMBEDDER": "hashing",
        "ENGRAM_MEMORY_VECTOR_PATH": str(root / "vectors"),
    }
    started: list[ServiceProcess] = []
    try:
        for name in ("embedding", "memory"):
            started.append(ServiceProcess(name, env, free_port(), root / "logs").start())
        gateway_env = {**env, "ENGRAM_GATEWAY_MEMORY_URL": started[1].url}
        started.append(ServiceProcess("gateway", gateway_env, free_port(), root / "logs").start())
        yield MemoryStack(started[-1].url, create_tenant(gateway_env, "langgraph"))
    finally:
        for proc in reversed(started):
            proc.stop()


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
