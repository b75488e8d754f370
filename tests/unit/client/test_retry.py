"""Retries: backoff with jitter, Retry-After, only safe requests, one idempotency key per write."""

from __future__ import annotations

import random
import time

import pytest

from engram_client import (
    ConnectionFailed,
    EngramClient,
    EngramError,
    RetryPolicy,
    ServiceUnavailable,
)
from engram_client.retry import RETRIED_STATUSES
from engram_devstack import free_port
from tests.unit.client.stub import Reply, StubServer, problem

pytestmark = pytest.mark.unit

ACCEPTED_MEMORY = Reply(202, {"memory_id": "mem_1", "status": "pending"})


def test_backoff_grows_exponentially_within_jittered_bounds() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=4.0, rng=random.Random(1))
    for retry_number, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (8, 4.0)]:
        delays = [policy.delay(retry_number) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8, "full jitter spreads over the whole range"
        assert len(set(delays)) > 100, "jittered, not fixed"


def test_retry_after_is_honoured_and_capped() -> None:
    policy = RetryPolicy(max_retry_after=10.0)
    assert policy.delay(1, retry_after=3.0) == 3.0
    assert policy.delay(1, retry_after=3600.0) == 10.0


def test_a_memory_write_retried_through_429_and_503_reuses_one_idempotency_key(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.on(
        "POST",
        "/v1/agents/agt_1/memories",
        problem(503, "broker-unavailable"),
        Reply(429, None, headers={"Retry-After": "0"}),
        ACCEPTED_MEMORY,
    )
    with EngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        accepted = client.write_memory("agt_1", "the carrier prefers email")
    seen = stub.seen("POST", "/v1/agents/agt_1/memories")
    assert accepted.memory_id == "mem_1"
    assert len(seen) == 3
    keys = {r.json()["idempotency_key"] for r in seen}
    headers = {r.headers["idempotency-key"] for r in seen}
    assert len(keys) == 1 and keys == headers


def test_two_logical_writes_get_two_keys_and_a_given_key_is_sent_as_is(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.on("POST", "/v1/agents/agt_1/memories", ACCEPTED_MEMORY)
    with EngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        client.write_memory("agt_1", "one")
        client.write_memory("agt_1", "two")
        client.write_memory("agt_1", "three", idempotency_key="caller-chosen")
    keys = [r.json()["idempotency_key"] for r in stub.requests]
    assert len(set(keys[:2])) == 2
    assert keys[2] == "caller-chosen"


def test_a_records_import_retried_after_a_dropped_connection_keeps_its_key(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.on(
        "POST",
        "/v1/records:import",
        Reply(drop=True),
        Reply(202, {"import_id": "imp_1", "status": "pending"}),
    )
    with EngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        accepted = client.import_records("carrier", [{"id": "c1", "name": "Acme"}])
    seen = stub.seen("POST", "/v1/records:import")
    assert accepted.import_id == "imp_1"
    assert len(seen) == 2
    assert seen[0].json()["idempotency_key"] == seen[1].json()["idempotency_key"]


def test_reads_are_retried_on_503_until_they_succeed(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.on(
        "GET",
        "/v1/prune-jobs/job_1",
        problem(503, "service-unavailable"),
        problem(503, "service-unavailable"),
        Reply(200, {"prune_job_id": "job_1", "status": "running"}),
    )
    with EngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        assert client.get_prune_job("job_1").status == "running"
    assert len(stub.requests) == 3


def test_retries_stop_after_max_attempts_with_the_last_error(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.on("GET", "/v1/agents", problem(503, "service-unavailable", "enrichment is down"))
    with EngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        with pytest.raises(ServiceUnavailable, match="enrichment is down"):
            client.list_agents()
    assert len(stub.requests) == fast_retry.max_attempts


@pytest.mark.parametrize("status", sorted(RETRIED_STATUSES - {429}))
def test_unkeyed_writes_are_not_repeated_after_an_answer(
    stub: StubServer, fast_retry: RetryPolicy, status: int
) -> None:
    stub.on("POST", "/v1/prune", problem(status, "unavailable"))
    with EngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        with pytest.raises(EngramError):
            client.start_prune(older_than_days=30)
    assert len(stub.requests) == 1


def test_unkeyed_writes_are_not_repeated_after_a_broken_exchange(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.on("POST", "/v1/agents", Reply(drop=True), Reply(201, {"agent_id": "agt_1"}))
    with EngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        with pytest.raises(ConnectionFailed):
            client.create_agent("planner")
    assert len(stub.requests) == 1, "the POST may have been applied, so it is not resent"


def test_client_errors_are_never_retried(stub: StubServer, fast_retry: RetryPolicy) -> None:
    stub.on("GET", "/v1/documents/doc_1", problem(404, "not-found"))
    with EngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        with pytest.raises(EngramError):
            client.get_document("doc_1")
    assert len(stub.requests) == 1


def test_an_unreachable_gateway_is_retried_then_reported(fast_retry: RetryPolicy) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with EngramClient(url, "egk_test", retry=fast_retry) as client:
        with pytest.raises(ConnectionFailed, match="after 4 attempt"):
            client.create_agent("planner")
    assert time.monotonic() - started < 5


def test_retry_after_seconds_are_waited(stub: StubServer) -> None:
    stub.on(
        "GET",
        "/v1/agents",
        Reply(429, None, headers={"Retry-After": "0.05"}),
        Reply(200, {"agents": []}),
    )
    started = time.monotonic()
    with EngramClient(stub.url, "egk_test", retry=RetryPolicy(base_delay=0.001)) as client:
        client.list_agents()
    assert time.monotonic() - started >= 0.05, "only the Retry-After could wait this long"


def test_unkeyed_writes_are_repeated_after_429_which_refused_them_unapplied(
    stub: StubServer, fast_retry: RetryPolicy
) -> None:
    stub.on(
        "POST",
        "/v1/agents",
        Reply(429, None, headers={"Retry-After": "0"}),
        Reply(201, {"agent_id": "agt_1", "tenant_id": "t", "created_at": "2026-12-01T00:00:00Z"}),
    )
    with EngramClient(stub.url, "egk_test", retry=fast_retry) as client:
        assert client.create_agent("planner").agent_id == "agt_1"
    assert len(stub.requests) == 2


def test_a_rate_limited_batch_is_retried_after_retry_after_with_the_same_keys(
    stub: StubServer,
) -> None:
    stub.on(
        "POST",
        "/v1/agents/agt_1/memories:batch",
        Reply(
            429,
            {"type": "/problems/rate-limited", "status": 429},
            content_type="application/problem+json",
            headers={"Retry-After": "0.05"},
        ),
        Reply(202, {"memories": [{"memory_id": "m1", "status": "pending"}]}),
    )
    started = time.monotonic()
    with EngramClient(stub.url, "egk_test", retry=RetryPolicy(base_delay=0.001)) as client:
        client.write_memories("agt_1", [{"content": "the carrier prefers email"}])
    seen = stub.seen("POST", "/v1/agents/agt_1/memories:batch")
    assert time.monotonic() - started >= 0.05, "only the Retry-After could wait this long"
    keys = {r.json()["memories"][0]["idempotency_key"] for r in seen}
    assert len(seen) == 2 and len(keys) == 1
