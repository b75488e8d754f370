"""Token buckets per tenant and route class: what a tenant may send, when, and what it is told."""

from __future__ import annotations

from typing import Any

import pytest

from engram_gateway.adapters.tenant_limits import TenantLimits, parse_overrides
from engram_gateway.domain.rate_limits import (
    BULK,
    READ,
    WRITE,
    Bucket,
    Policy,
    limit_header,
    parse_rate_override,
    policy_header,
    route_class,
    take,
)
from engram_gateway.service.rate_limiting import RateLimiter

pytestmark = pytest.mark.unit

WRITES = Policy(rate=10.0, burst=20)


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_full_bucket_allows_its_burst_then_refuses_with_the_wait() -> None:
    bucket = Bucket(tokens=20.0, at=0.0)
    allowed = [take(bucket, WRITES, 0.0, 1).allowed for _ in range(20)]
    refused = take(bucket, WRITES, 0.0, 1)
    assert all(allowed)
    assert not refused.allowed
    assert refused.remaining == 0
    assert refused.retry_after == 1
    assert refused.reset == 2


def test_the_bucket_refills_at_its_rate_and_never_beyond_its_burst() -> None:
    bucket = Bucket(tokens=0.0, at=0.0)
    assert take(bucket, WRITES, 0.5, 5).allowed
    assert bucket.tokens == 0.0
    assert take(bucket, WRITES, 1000.0, 1).remaining == 19


def test_a_refused_charge_takes_nothing_and_says_how_long_to_wait() -> None:
    bucket = Bucket(tokens=3.0, at=0.0)
    refused = take(bucket, WRITES, 0.0, 18)
    assert not refused.allowed
    assert refused.retry_after == 2
    assert take(bucket, WRITES, 0.0, 3).allowed


def test_a_cost_above_the_burst_waits_for_a_full_bucket_instead_of_forever() -> None:
    bucket = Bucket(tokens=0.0, at=0.0)
    assert not take(bucket, WRITES, 1.0, 500).allowed
    assert take(bucket, WRITES, 2.0, 500).allowed


def test_a_clock_going_back_never_adds_tokens() -> None:
    bucket = Bucket(tokens=0.0, at=10.0)
    assert not take(bucket, WRITES, 5.0, 1).allowed
    assert bucket.tokens == 0.0


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/v1/agents/{agent_id}/memories", WRITE),
        ("POST", "/v1/agents/{agent_id}/memories:batch", BULK),
        ("POST", "/v1/agents/{agent_id}/conversations", WRITE),
        ("POST", "/v1/documents", WRITE),
        ("POST", "/v1/records:import", WRITE),
        ("DELETE", "/v1/agents/{agent_id}/memories/{memory_id}", WRITE),
        ("POST", "/v1/agents/{agent_id}/recall", READ),
        ("POST", "/v1/knowledge/search", READ),
        ("POST", "/v1/knowledge/paths", READ),
        ("GET", "/v1/agents/{agent_id}/memories", READ),
        ("GET", "/v1/records", READ),
        ("GET", "/healthz", None),
        ("GET", "/ops", None),
    ],
)
def test_routes_fall_in_their_class(method: str, path: str, expected: str | None) -> None:
    assert route_class(method, path) == expected


def test_the_headers_are_the_drafts_structured_field_items() -> None:
    bucket = Bucket(tokens=20.0, at=0.0)
    decision = take(bucket, Policy(rate=100.0, burst=100), 0.0, 58)
    assert policy_header(WRITE, Policy(rate=100.0, burst=100)) == '"write";q=100;w=1'
    assert limit_header(WRITE, take(Bucket(100.0, 0.0), Policy(100.0, 100), 0.0, 58)) == (
        '"write";r=42;t=1'
    )
    assert not decision.allowed


def test_tenants_and_classes_have_buckets_of_their_own() -> None:
    clock = Clock()
    limiter = RateLimiter({WRITE: WRITES, READ: WRITES, BULK: WRITES}, clock=clock)
    for _ in range(20):
        limiter.charge("ten_a", WRITE, 1, {})
    assert not limiter.charge("ten_a", WRITE, 1, {})[1].allowed
    assert limiter.charge("ten_b", WRITE, 1, {})[1].allowed
    assert limiter.charge("ten_a", READ, 1, {})[1].allowed
    clock.now += 0.5
    assert limiter.charge("ten_a", WRITE, 1, {})[1].allowed


def test_a_tenants_override_replaces_the_default_for_its_class_only() -> None:
    limiter = RateLimiter({WRITE: WRITES, READ: WRITES, BULK: WRITES}, clock=Clock())
    roomy = {WRITE: Policy(rate=1.0, burst=1000)}
    policy, decision = limiter.charge("ten_a", WRITE, 500, roomy)
    assert policy == Policy(rate=1.0, burst=1000)
    assert decision.allowed
    assert limiter.charge("ten_a", READ, 1, roomy)[0] == WRITES


def test_the_least_recently_charged_bucket_is_forgotten_beyond_the_size() -> None:
    limiter = RateLimiter({WRITE: WRITES}, size=2, clock=Clock())
    for _ in range(20):
        limiter.charge("ten_a", WRITE, 1, {})
    limiter.charge("ten_b", WRITE, 1, {})
    limiter.charge("ten_c", WRITE, 1, {})
    assert limiter.charge("ten_a", WRITE, 1, {})[1].remaining == 19


def test_only_well_formed_overrides_of_known_classes_are_read() -> None:
    raw = {
        "write": {"rate": 5, "burst": 10},
        "read": {"rate": 0, "burst": 10},
        "bulk": "lots",
        "other": {"rate": 5, "burst": 10},
    }
    assert parse_overrides(raw) == {WRITE: Policy(rate=5.0, burst=10)}
    assert parse_overrides(None) == {}


class Tenants:
    """`find_one` by `_id`, counting trips."""

    def __init__(self, rows: dict[str, dict[str, Any]]) -> None:
        self.rows = rows
        self.trips = 0

    async def find_one(self, query: dict[str, Any], projection: Any = None) -> Any:
        self.trips += 1
        return self.rows.get(query["_id"])


async def test_a_tenants_overrides_are_read_from_its_row_and_remembered() -> None:
    tenants = Tenants(
        {"ten_a": {"_id": "ten_a", "rate_limits": {"bulk": {"rate": 1, "burst": 100}}}}
    )
    limits = TenantLimits({"tenants": tenants}, cache_seconds=60)
    assert await limits.overrides("ten_a") == {BULK: Policy(rate=1.0, burst=100)}
    assert await limits.overrides("ten_a") == {BULK: Policy(rate=1.0, burst=100)}
    assert await limits.overrides("ten_b") == {}
    assert tenants.trips == 2


def test_an_operators_rate_override_is_read_with_its_class() -> None:
    assert parse_rate_override("bulk=200/1000") == ("bulk", Policy(rate=200.0, burst=1000))
    assert parse_rate_override("read=0.5/2") == ("read", Policy(rate=0.5, burst=2))


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("writes=1/5", "CLASS=RATE/BURST"),
        ("write=5", "CLASS=RATE/BURST"),
        ("write=0/5", "positive"),
        ("write=nan/5", "positive"),
        ("write=1/0", "burst at least 1"),
    ],
)
def test_a_malformed_rate_override_says_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_rate_override(text)
