"""Per-tenant rate limits: a tenant over its limit gets 429 with the headers; others do not."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from pymongo import MongoClient

from engram_gateway.domain.keys import parse_key
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


def test_a_tenants_row_overrides_the_default(
    gateway: ServiceProcess, stack_env: dict[str, str]
) -> None:
    key = create_tenant(stack_env, "roomy")
    parts = parse_key(key)
    assert parts is not None
    mongo: MongoClient[dict[str, object]] = MongoClient(stack_env["MONGODB_URI"])
    try:
        db = mongo[f"{stack_env['ENGRAM_DATABASE_PREFIX']}gateway"]
        row = db["api_keys"].find_one({"_id": parts[0]})
        assert row is not None
        db["tenants"].update_one(
            {"_id": row["tenant_id"]}, {"$set": {"rate_limits": {"write": {"rate": 1, "burst": 5}}}}
        )
    finally:
        mongo.close()
    with _client(gateway, key) as client:
        answers = [client.post("/v1/agents", json={}) for _ in range(6)]
    assert [r.status_code for r in answers] == [201] * 5 + [429]
    assert answers[0].headers["ratelimit-policy"] == '"write";q=5;w=5'
