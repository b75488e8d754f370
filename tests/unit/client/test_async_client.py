"""The async client has the same surface and the same retry, key-reuse and error behaviour."""

from __future__ import annotations

import inspect

import pytest

from engram_client import AsyncEngramClient, EngramClient, NotFound, RetryPolicy
from tests.unit.client.stub import Reply, StubServer, problem

pytestmark = pytest.mark.unit


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def test_both_clients_expose_the_same_methods_with_the_same_parameters() -> None:
    assert _public(EngramClient) == _public(AsyncEngramClient)
    for name in _public(EngramClient) - {"connection", "retry"}:
        sync_params = list(inspect.signature(getattr(EngramClient, name)).parameters)
        async_params = list(inspect.signature(getattr(AsyncEngramClient, name)).parameters)
        assert sync_params == async_params, name


async def test_async_memory_write_retries_with_one_key(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.on(
        "POST",
        "/v1/agents/agt_1/memories",
        problem(503, "broker-unavailable"),
        Reply(drop=True),
        Reply(202, {"memory_id": "mem_1", "status": "pending"}),
    )
    async with AsyncEngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        accepted = await client.write_memory("agt_1", "remember this", type="fact")
    keys = {r.json()["idempotency_key"] for r in stub.requests}
    assert accepted.memory_id == "mem_1"
    assert len(stub.requests) == 3 and len(keys) == 1


async def test_async_errors_and_pages(stub: StubServer) -> None:
    stub.on("GET", "/v1/documents/doc_x", problem(404, "not-found", "no such document"))
    stub.on(
        "GET",
        "/v1/records",
        Reply(200, {"records": [{"record_id": "r1"}], "next_cursor": "n1"}),
        Reply(200, {"records": [{"record_id": "r2"}], "next_cursor": None}),
    )
    async with AsyncEngramClient(stub.url, "egk_test") as client:
        with pytest.raises(NotFound, match="no such document"):
            await client.get_document("doc_x")
        ids = [r.record_id async for r in client.iter_records()]
    assert ids == ["r1", "r2"]


async def test_a_retried_batch_sends_the_same_key_for_each_memory(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    accepted = {"memories": [{"memory_id": "mem_a"}, {"memory_id": "mem_b"}]}
    stub.on(
        "POST",
        "/v1/agents/agt_1/memories:batch",
        problem(503, "broker-unavailable"),
        Reply(202, accepted),
    )
    memories = [{"content": "first"}, {"content": "second", "idempotency_key": "mine"}]
    async with AsyncEngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        answer = await client.write_memories("agt_1", memories)
    sent = [[m["idempotency_key"] for m in r.json()["memories"]] for r in stub.requests]
    assert [a.memory_id for a in answer] == ["mem_a", "mem_b"]
    assert len(sent) == 2 and sent[0] == sent[1]
    assert sent[0][1] == "mine" and sent[0][0] != sent[0][1]


async def test_async_listing_count_and_scoped_clear(stub: StubServer) -> None:
    path = "/v1/agents/agt_1/memories"
    stub.on(
        "GET",
        path,
        Reply(200, {"memories": [{"memory_id": "m1", "status": "active"}], "next_cursor": "c"}),
        Reply(200, {"memories": [{"memory_id": "m2", "status": "active"}], "next_cursor": None}),
    )
    stub.on("GET", f"{path}:count", Reply(200, {"count": 2, "by_status": {"active": 2}}))
    stub.on("DELETE", path, Reply(200, {"agent_id": "agt_1", "withdrawn": 2}))
    async with AsyncEngramClient(stub.url, "egk_test") as client:
        ids = [m.memory_id async for m in client.iter_memories("agt_1", session_id="s1")]
        counted = await client.count_memories("agt_1", session_id="s1")
        cleared = await client.clear_memories("agt_1", session_id="s1")
    assert ids == ["m1", "m2"] and counted.count == 2 and cleared.withdrawn == 2
    assert all(r.query.get("session_id") == ["s1"] for r in stub.requests)


async def test_async_unkeyed_write_is_repeated_after_429(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.on(
        "POST",
        "/v1/prune",
        Reply(429, None, headers={"Retry-After": "0"}),
        Reply(202, {"prune_job_id": "job_1", "status": "running"}),
    )
    async with AsyncEngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        assert (await client.start_prune(older_than_days=30)).prune_job_id == "job_1"
    assert len(stub.requests) == 2
