"""Integration tier: real processes over the real broker and database."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from motor.motor_asyncio import AsyncIOMotorClient

from engram_devstack import free_port
from tests.conftest import Infra
from tests.integration.memory.conftest import MemoryStack
from tests.support.services import ServiceProcess, start_together


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


@pytest.fixture
async def mongo_db(infra: Infra) -> AsyncIterator[Any]:
    """A database of its own (a unique name) for a test that drives an adapter directly."""
    client: AsyncIOMotorClient[Any] = AsyncIOMotorClient(infra.mongodb_uri, tz_aware=True)
    yield client[f"t_{uuid.uuid4().hex[:12]}"]
    client.close()


@pytest.fixture
def start_stack(
    service: Callable[..., ServiceProcess], tmp_path: Path
) -> Iterator[Callable[..., MemoryStack]]:
    """Factory: start embedding, memory and gateway with extra env (hashing embedder by default)."""

    def start(**extra: str) -> MemoryStack:
        env = {
            "ENGRAM_EMBEDDING_EMBEDDER": "hashing",
            "ENGRAM_MEMORY_EMBEDDER": "hashing",
            "ENGRAM_MEMORY_VECTOR_PATH": str(tmp_path / "vectors"),
            **extra,
        }
        embedding = service("embedding", start=False, **env)
        memory = service("memory", start=False, **env)
        gateway = service("gateway", start=False, ENGRAM_GATEWAY_MEMORY_URL=memory.url, **env)
        start_together(embedding, memory, gateway)
        return MemoryStack(gateway, memory, embedding, {**gateway.env, **env})

    yield start


@pytest.fixture
def stack(start_stack: Callable[..., MemoryStack]) -> MemoryStack:
    """The stack with the hashing embedder (fast, deterministic)."""
    return start_stack()
