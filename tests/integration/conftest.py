"""Integration tier: real processes over the real broker and database."""

from __future__ import annotations

import functools
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from motor.motor_asyncio import AsyncIOMotorClient

from tests.conftest import Infra, service_env, unique_names
from tests.integration.memory.conftest import MemoryStack
from tests.support.services import ServiceProcess, Services, start_together


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/integration is marked `integration`."""
    for item in items:
        if "tests/integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def service(stack_env: dict[str, str], tmp_path: Path) -> Iterator[Services]:
    """Factory: `service("ingest", **env)` starts a process; all are stopped after the test."""
    services = Services(stack_env, tmp_path / "logs")
    yield services
    services.stop_all()


@pytest.fixture(scope="module")
def module_service(infra: Infra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    """As `service`, on names of the module's own, for processes all its tests share."""
    services = Services(service_env(infra, unique_names()), tmp_path_factory.mktemp("module"))
    yield services
    services.stop_all()


@pytest.fixture
async def mongo_db(infra: Infra) -> AsyncIterator[Any]:
    """A database of its own (a unique name) for a test that drives an adapter directly."""
    client: AsyncIOMotorClient[Any] = AsyncIOMotorClient(infra.mongodb_uri, tz_aware=True)
    yield client[f"t_{uuid.uuid4().hex[:12]}"]
    client.close()


def memory_stack_of(
    service: Callable[..., ServiceProcess], vectors: Path, **extra: str
) -> MemoryStack:
    """Embedding, memory and gateway started together, with the hashing embedder unless
    `extra` names another."""
    env = {
        "ENGRAM_EMBEDDING_EMBEDDER": "hashing",
        "ENGRAM_MEMORY_EMBEDDER": "hashing",
        "ENGRAM_MEMORY_VECTOR_PATH": str(vectors),
        **extra,
    }
    embedding = service("embedding", start=False, **env)
    memory = service("memory", start=False, **env)
    gateway = service("gateway", start=False, ENGRAM_GATEWAY_MEMORY_URL=memory.url, **env)
    start_together(embedding, memory, gateway)
    return MemoryStack(gateway, memory, embedding, {**gateway.env, **env})


@pytest.fixture
def start_stack(
    service: Callable[..., ServiceProcess], tmp_path: Path
) -> Callable[..., MemoryStack]:
    """Factory: start embedding, memory and gateway with extra env (hashing embedder by default)."""
    return functools.partial(memory_stack_of, service, tmp_path / "vectors")


@pytest.fixture(scope="module")
def shared_stack(module_service: Services, tmp_path_factory: pytest.TempPathFactory) -> MemoryStack:
    """One memory stack for a module marked `shared_stack`."""
    return memory_stack_of(module_service, tmp_path_factory.mktemp("stack") / "vectors")


@pytest.fixture
def stack(request: pytest.FixtureRequest, start_stack: Callable[..., MemoryStack]) -> MemoryStack:
    """The stack with the hashing embedder (fast, deterministic): the test's own, or the
    module's when it is marked `shared_stack` (its tests write under tenants of their own and
    stop no process, so a stack per test would only cost its start)."""
    if request.node.get_closest_marker("shared_stack"):
        shared: MemoryStack = request.getfixturevalue("shared_stack")
        return shared
    return start_stack()
