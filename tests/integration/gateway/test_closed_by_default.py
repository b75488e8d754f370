"""Closed by default: the real services refuse internal calls without the right token (and
every call when they have none), the gateway will not start without one, and no route
redirects to a host the caller named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from engram_platform.internal import TENANT_HEADER, TOKEN_HEADER
from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write
from tests.support.internal import internal_headers
from tests.support.services import ServiceProcess
from tests.support.tenants import tenant_of

PROBLEM = "application/problem+json"


def test_internal_reads_and_deletes_need_the_token(stack: MemoryStack) -> None:
    key = stack.tenant()
    with stack.client(key) as client:
        agent = new_agent(client)
        memory_id = write(client, agent, "the vault code is kept in the blue binder")
        wait_status(client, agent, memory_id, {"active"})
    tenant = tenant_of(stack.env, key)
    path = f"{stack.memory.url}/internal/v1/agents/{agent}/memories/{memory_id}"
    forged = [{TENANT_HEADER: tenant}, {TENANT_HEADER: tenant, TOKEN_HEADER: "guess"}]
    for headers in forged:
        for method in ("GET", "DELETE"):
            refused = httpx.request(method, path, headers=headers)
            assert refused.status_code == 401, refused.text
            assert refused.headers["content-type"].startswith(PROBLEM)
            assert "blue binder" not in refused.text
    cleared = httpx.delete(
        f"{stack.memory.url}/internal/v1/agents/{agent}/memories", headers=forged[0]
    )
    assert cleared.status_code == 401
    read = httpx.get(path, headers=internal_headers(tenant))
    assert read.status_code == 200 and read.json()["status"] == "active"


def test_a_trailing_slash_is_a_404_not_a_redirect_to_the_callers_host(stack: MemoryStack) -> None:
    key = stack.tenant()
    with stack.client(key) as client:
        for path in ("/v1/agents/", "/v1/agents/x/memories/"):
            answer = client.get(path, headers={"Host": "evil.example"}, follow_redirects=False)
            assert answer.status_code == 404, answer.text
            assert "location" not in answer.headers
            assert answer.headers["content-type"].startswith(PROBLEM)


def test_without_a_token_services_refuse_and_the_gateway_does_not_start(
    service: Callable[..., ServiceProcess], tmp_path: Path
) -> None:
    memory = service(
        "memory",
        ENGRAM_INTERNAL_TOKEN="",
        ENGRAM_MEMORY_EMBEDDER="hashing",
        ENGRAM_MEMORY_VECTOR_PATH=str(tmp_path / "vectors"),
    )
    for headers in ({TENANT_HEADER: "t1"}, {TENANT_HEADER: "t1", TOKEN_HEADER: ""}):
        answer = httpx.post(f"{memory.url}/internal/v1/memories/count", json={}, headers=headers)
        assert answer.status_code == 401, answer.text
        assert answer.json()["type"] == "/problems/internal-token-unset"
    assert "ENGRAM_INTERNAL_TOKEN is not set" in memory.logs()

    gateway = service("gateway", start=False, ENGRAM_INTERNAL_TOKEN="")
    gateway.start(wait=False)
    assert gateway.proc is not None
    assert gateway.proc.wait(60) == 2
    assert "ENGRAM_INTERNAL_TOKEN is not set" in gateway.logs()
