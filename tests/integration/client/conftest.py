"""Gateways for the client's tests: alone (the rest unreachable), with the document pipeline, or with memory."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from engram_devstack import free_port
from tests.integration.memory.conftest import MemoryStack
from tests.support.services import ServiceProcess, start_together
from tests.support.tenants import create_tenant


def engram(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a fresh interpreter, without inheriting a developer's key or URL."""
    base = {k: v for k, v in os.environ.items() if k not in {"ENGRAM_URL", "ENGRAM_API_KEY"}}
    return subprocess.run(
        [sys.executable, "-m", "engram_client", *args],
        env={**base, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@dataclass
class Stack:
    """A running gateway and a tenant's API key on it."""

    gateway: ServiceProcess
    key: str


@pytest.fixture
def lone_gateway(service: Callable[..., ServiceProcess]) -> Stack:
    """Only the gateway; calls it proxies to other services answer 503."""
    dead = f"http://127.0.0.1:{free_port()}"
    gateway = service(
        "gateway",
        ENGRAM_GATEWAY_EXTRACTION_URL=dead,
        ENGRAM_GATEWAY_ENRICHMENT_URL=dead,
        ENGRAM_GATEWAY_MEMORY_URL=dead,
        ENGRAM_GATEWAY_INGEST_URL=dead,
    )
    return Stack(gateway, create_tenant(gateway.env))


@pytest.fixture
def pipeline(service: Callable[..., ServiceProcess]) -> Stack:
    """Gateway, ingest and extraction: documents reach `extracted` and become records."""
    ingest = service("ingest", start=False)
    extraction = service("extraction", start=False)
    dead = f"http://127.0.0.1:{free_port()}"
    gateway = service(
        "gateway",
        start=False,
        ENGRAM_GATEWAY_INGEST_URL=ingest.url,
        ENGRAM_GATEWAY_EXTRACTION_URL=extraction.url,
        ENGRAM_GATEWAY_ENRICHMENT_URL=dead,
        ENGRAM_GATEWAY_MEMORY_URL=dead,
    )
    start_together(ingest, extraction, gateway)
    return Stack(gateway, create_tenant(gateway.env))


@pytest.fixture
def memory_stack(stack: MemoryStack) -> Stack:
    """Gateway, memory and embedding with the deterministic hashing embedder (see `stack`), and
    a tenant of the test's own."""
    return Stack(stack.gateway, create_tenant(stack.gateway.env))


@pytest.fixture
def full_stack(service: Callable[..., ServiceProcess], tmp_path: Path) -> Stack:
    """Every service a document's prune cascade touches, with the hashing embedder."""
    env = {
        "ENGRAM_EMBEDDING_EMBEDDER": "hashing",
        "ENGRAM_MEMORY_EMBEDDER": "hashing",
        "ENGRAM_ENRICHMENT_EMBEDDER": "hashing",
        "ENGRAM_MEMORY_VECTOR_PATH": str(tmp_path / "memory-vectors"),
        "ENGRAM_ENRICHMENT_VECTOR_PATH": str(tmp_path / "knowledge-vectors"),
    }
    backends = [
        service(name, start=False, **env)
        for name in ("ingest", "extraction", "enrichment", "embedding", "memory")
    ]
    urls = {f"ENGRAM_GATEWAY_{proc.name.upper()}_URL": proc.url for proc in backends}
    gateway = service("gateway", start=False, **urls, **env)
    start_together(*backends, gateway)
    return Stack(gateway, create_tenant(gateway.env))
