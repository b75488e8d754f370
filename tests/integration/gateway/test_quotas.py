"""A tenant's storage quotas at the real gateway: the write past its limit is a 403 problem
naming the quota, a batch is checked whole, a retried write counts once, a deleted memory gives
its quota back, and a tenant created with its own limits gets them instead of the defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.memory.conftest import new_agent, wait_status, write
from tests.support.services import ServiceProcess

PROBLEM = "application/problem+json"


@pytest.fixture
def gateway(service: Callable[..., ServiceProcess]) -> ServiceProcess:
    """The gateway alone: writes are queued without a memory service to ask (none answers at
    the memory URL, so each is queued as new)."""
    return service("gateway", ENGRAM_GATEWAY_MEMORY_URL="http://127.0.0.1:9")


def _tenant(gateway: ServiceProcess, *quotas: str) -> httpx.Client:
    """A tenant created by the operator's CLI with its own limits, and a client with its key."""
    flags = [arg for quota in quotas for arg in ("--quota", quota)]
    out = subprocess.run(
        [sys.executable, "-m", "engram_gateway", "create-tenant", "quota", *flags],
        env={**os.environ, **gateway.env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    key = out.stdout.strip()
    return httpx.Client(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=10
    )


def _exceeded(response: httpx.Response, quota: str) -> dict[str, Any]:
    assert response.status_code == 403, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert (body["type"], body["quota"]) == ("/problems/quota-exceeded", quota)
    return body


def _memory(client: httpx.Client, agent: str, n: int) -> httpx.Response:
    body = {"content": f"fact number {n}", "idempotency_key": f"k{n}"}
    return client.post(f"/v1/agents/{agent}/memories", json=body)


def test_memories_past_the_tenants_limit_are_refused(gateway: ServiceProcess) -> None:
    with _tenant(gateway, "memories=3") as client:
        agent = client.post("/v1/agents", json={}).json()["agent_id"]
        assert [_memory(client, agent, n).status_code for n in range(2)] == [202, 202]
        assert _memory(client, agent, 0).status_code == 202, "a retry counts once"

        batch = {"memories": [{"content": f"batch {n}"} for n in range(2)]}
        refused = _exceeded(
            client.post(f"/v1/agents/{agent}/memories:batch", json=batch), "memories"
        )
        assert (refused["limit"], refused["used"], refused["requested"]) == (3, 2, 2)

        assert _memory(client, agent, 2).status_code == 202
        refused = _exceeded(_memory(client, agent, 3), "memories")
        assert (refused["limit"], refused["used"]) == (3, 3)
        assert _memory(client, agent, 2).status_code == 202, "a retry at the limit still answers"


def test_documents_and_their_bytes_are_counted(gateway: ServiceProcess) -> None:
    with _tenant(gateway, "documents=1", "document_bytes=20") as client:
        doc = {"name": "a.txt", "mime": "text/plain", "text": "0123456789"}
        assert client.post("/v1/documents", json=doc).status_code == 202
        assert client.post("/v1/documents", json=doc).status_code == 202, "the same version"
        _exceeded(client.post("/v1/documents", json={**doc, "name": "b.txt"}), "documents")
        new_version = {**doc, "text": "abcdefghijk"}
        refused = _exceeded(client.post("/v1/documents", json=new_version), "document_bytes")
        assert (refused["limit"], refused["used"], refused["requested"]) == (20, 10, 11)


def test_a_deleted_memory_gives_its_quota_back(
    service: Callable[..., ServiceProcess], tmp_path: Path
) -> None:
    env = {
        "ENGRAM_EMBEDDING_EMBEDDER": "hashing",
        "ENGRAM_MEMORY_EMBEDDER": "hashing",
        "ENGRAM_MEMORY_VECTOR_PATH": str(tmp_path / "vectors"),
    }
    service("embedding", **env)
    memory = service("memory", **env)
    gateway = service("gateway", ENGRAM_GATEWAY_MEMORY_URL=memory.url, **env)
    with _tenant(gateway, "memories=1") as client:
        agent = new_agent(client)
        first = write(client, agent, "the staging database rotates its password on Fridays")
        wait_status(client, agent, first, {"active"})
        _exceeded(_memory(client, agent, 1), "memories")
        deleted = client.delete(f"/v1/agents/{agent}/memories/{first}")
        assert deleted.status_code == 200, deleted.text
        assert _memory(client, agent, 1).status_code == 202
        _exceeded(_memory(client, agent, 2), "memories")
