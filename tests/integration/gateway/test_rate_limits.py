"""Per-tenant rate limits: a tenant over its limit gets 429 with the headers; others do not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable

import httpx
import pytest

from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant

LIMITS = {
    "ENGRAM_GATEWAY_RATE_LIMIT_WRITE_PER_SECOND": "0.001",
    "ENGRAM_GATEWAY_RATE_LIMIT_WRITE_BURST": "3",
    "ENGRAM_GATEWAY_RATE_LIMIT_BULK_PER_SECOND": "0.001",
    "ENGRAM_GATEWAY_RATE_LIMIT_BULK_BURST": "100",
    "ENGRAM_GATEWAY_MEMORY_URL": "http://127.0.0.1:9",
}
"""Buckets that refill about once in a quarter of an hour, so no refill happens mid-test."""


@pytest.fixture
def gateway(service: Callable[..., ServiceProcess]) -> ServiceProcess:
    return service("gateway", **LIMITS)


def _client(gateway: ServiceProcess, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )


def test_a_tenant_over_its_write_limit_gets_429_and_another_tenant_does_not(
    gateway: ServiceProcess, stack_env: dict[str, str]
) -> None:
    noisy, quiet = create_tenant(stack_env, "noisy"), create_tenant(stack_env, "quiet")
    with _client(gateway, noisy) as a, _client(gateway, quiet) as b:
        created = [a.post("/v1/agents", json={"name": f"a{n}"}) for n in range(3)]
        assert [r.status_code for r in created] == [201, 201, 201]
        assert created[0].headers["ratelimit-policy"] == '"write";q=3;w=3000'
        assert [r.headers["ratelimit"].split(";")[1] for r in created] == ["r=2", "r=1", "r=0"]

        refused = a.post("/v1/agents", json={"name": "a3"})
        assert refused.status_code == 429
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert refused.json()["type"] == "/problems/rate-limited"
        assert int(refused.headers["retry-after"]) >= 1
        assert refused.headers["ratelimit-policy"] == '"write";q=3;w=3000'
        assert refused.headers["ratelimit"].startswith('"write";r=0;t=')
        assert len(a.get("/v1/agents").json()["agents"]) == 3, "reads have a bucket of their own"

        assert b.post("/v1/agents", json={"name": "b0"}).status_code == 201


def test_a_batch_costs_one_token_per_memory(
    gateway: ServiceProcess, stack_env: dict[str, str]
) -> None:
    key = create_tenant(stack_env, "bulk")
    with _client(gateway, key) as client:
        agent_id = client.post("/v1/agents", json={}).json()["agent_id"]
        batch = {"memories": [{"content": f"fact number {n}"} for n in range(40)]}
        first = client.post(f"/v1/agents/{agent_id}/memories:batch", json=batch)
        second = client.post(f"/v1/agents/{agent_id}/memories:batch", json=batch)
        third = client.post(f"/v1/agents/{agent_id}/memories:batch", json=batch)
    assert first.status_code == 202 and second.status_code == 202
    assert first.headers["ratelimit"].startswith('"bulk";r=60;')
    assert second.headers["ratelimit"].startswith('"bulk";r=20;')
    assert third.status_code == 429


def test_the_operator_changes_a_tenants_limits_and_the_gateway_applies_them(
    gateway: ServiceProcess, stack_env: dict[str, str]
) -> None:
    key = create_tenant(stack_env, "roomy")
    changed = subprocess.run(
        [
            sys.executable,
            "-m",
            "engram_client",
            "tenant",
            "limits",
            "--rate",
            "write=1/5",
            "--quota",
            "memories=100",
        ],
        input=key,
        env={**os.environ, **gateway.env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    limits = json.loads(changed.stdout)
    assert limits["rate_limits"] == {"write": {"rate": 1.0, "burst": 5}}
    assert limits["quotas"] == {"memories": 100}
    with _client(gateway, key) as client:
        answers = [client.post("/v1/agents", json={}) for _ in range(6)]
    assert [r.status_code for r in answers] == [201] * 5 + [429]
    assert answers[0].headers["ratelimit-policy"] == '"write";q=5;w=5'


def test_limits_for_no_such_tenant_are_refused_with_the_reason(
    gateway: ServiceProcess,
) -> None:
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "engram_gateway",
            "set-limits",
            "--tenant",
            "ten_missing",
            "--rate",
            "read=5/5",
        ],
        env={**os.environ, **gateway.env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 1
    assert "no such tenant" in refused.stderr
