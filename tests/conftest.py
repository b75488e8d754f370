"""Fixtures every tier shares: the real broker and database, and isolated names per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.backend import Backend, BackendChoiceError, select_backend
from tests.support.docker_probe import docker_answers
from tests.support.retries import fast_retries

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Infra:
    """Addresses of the Kafka broker, the MongoDB-protocol server and (containers) Qdrant."""

    bootstrap: str
    mongodb_uri: str
    qdrant_url: str | None = None
    """A Qdrant server for the services; None leaves them on the embedded engine."""

    def qdrant_env(self) -> dict[str, str]:
        """QDRANT_URL for service processes when there is a Qdrant server, else nothing."""
        return {"QDRANT_URL": self.qdrant_url} if self.qdrant_url else {}


@pytest.fixture(scope="session")
def infra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Infra]:
    """The servers `tests/support/backend.py` chooses: external ones, containers or our own."""
    backend = chosen_backend()
    external_kafka = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "")
    external_mongo = os.environ.get("MONGODB_URI", "")
    if backend == "external":
        yield Infra(external_kafka, external_mongo)
    elif backend == "containers":
        from tests.support.containers import started_containers

        with started_containers() as servers:
            yield Infra(
                external_kafka or servers.bootstrap,
                external_mongo or servers.mongodb_uri,
                os.environ.get("QDRANT_URL") or servers.qdrant_url,
            )
    else:
        with own_servers(tmp_path_factory.mktemp("infra")) as (kafka, ferret):
            yield Infra(
                external_kafka or kafka.address, external_mongo or f"mongodb://{ferret.address}"
            )


def chosen_backend() -> Backend:
    """The session's backend; a refused choice fails the tests that need servers with its reason
    alone (no traceback, no chained exception)."""
    try:
        return select_backend(os.environ, docker_answers)
    except BackendChoiceError as refused:
        reason = str(refused)
    pytest.fail(reason, pytrace=False)


@contextmanager
def own_servers(state: Path, heap_mb: int = 1536) -> Iterator[tuple[Any, Any]]:
    """A Kafka broker and a FerretDB on free ports under `state`, stopped on exit.

    Tests that stop and restart the servers use this too, so they never touch shared ones.
    """
    from engram_devstack.ferret import FerretServer
    from engram_devstack.kafka import KafkaServer
    from engram_devstack.ports import free_ports

    kafka_port, controller_port, mongo_port = free_ports(3)
    kafka = KafkaServer(
        state_dir=state / "kafka", port=kafka_port, controller_port=controller_port, heap_mb=heap_mb
    )
    ferret = FerretServer(state_dir=state / "ferretdb", port=mongo_port)
    started = []
    try:
        for server in (kafka, ferret):
            server.ensure_installed()
            server.start()
            started.append(server)
        for server in (kafka, ferret):
            server.wait_ready(120)
        yield kafka, ferret
    finally:
        for server in reversed(started):
            server.stop()


def unique_names() -> dict[str, str]:
    """A unique topic and database prefix, so tests never see each other's data."""
    tag = uuid.uuid4().hex[:10]
    return {"ENGRAM_TOPIC_PREFIX": f"t{tag}.", "ENGRAM_DATABASE_PREFIX": f"t{tag}_"}


@pytest.fixture
def names() -> dict[str, str]:
    """The test's own topic and database prefix."""
    return unique_names()


@pytest.fixture
def stack_env(infra: Infra, names: dict[str, str]) -> dict[str, str]:
    """Environment for the test's service processes."""
    return service_env(infra, names)


def service_env(infra: Infra, names: dict[str, str]) -> dict[str, str]:
    """Environment for service processes under test: the servers, fast retries, the names."""
    return {
        "KAFKA_BOOTSTRAP_SERVERS": infra.bootstrap,
        "MONGODB_URI": infra.mongodb_uri,
        **infra.qdrant_env(),
        "ENGRAM_LOG_LEVEL": "INFO",
        **fast_retries(0.05, 0.2),
        "ENGRAM_TOPIC_PARTITIONS": "1",
        **names,
    }
