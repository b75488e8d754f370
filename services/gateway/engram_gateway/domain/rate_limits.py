"""Token buckets per tenant and route class, and the IETF headers that describe them (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass

WRITE = "write"
BULK = "bulk"
READ = "read"
CLASSES = (WRITE, BULK, READ)

_READ_POSTS = ("/recall", "/v1/knowledge/search", "/v1/knowledge/paths")
"""POST routes that only read."""


@dataclass(frozen=True)
class Policy:
    """`rate` tokens a second refill a bucket holding at most `burst`."""

    rate: float
    burst: int

    @property
    def window(self) -> int:
        """Whole seconds an empty bucket takes to fill: the policy's `w`."""
        return max(1, math.ceil(self.burst / self.rate))


@dataclass
class Bucket:
    """What is left of one tenant's allowance for one class, as of `at` (monotonic seconds)."""

    tokens: float
    at: float


@dataclass(frozen=True)
class Decision:
    """One charge's outcome: allowed or not, what remains, and when to come back."""

    allowed: bool
    remaining: int
    reset: int
    """Whole seconds until the bucket is full again: the `t` of the RateLimit header."""
    retry_after: int
    """Whole seconds until this charge would be allowed (0 when it was)."""


def parse_rate_override(text: str) -> tuple[str, Policy]:
    """`write=50/100` as (class, a refill of 50 a second into a bucket of 100); ValueError
    names what is wrong."""
    name, sep, value = text.partition("=")
    rate, slash, burst = value.partition("/")
    if not sep or name not in CLASSES or not slash:
        raise ValueError(f"give CLASS=RATE/BURST with CLASS one of {', '.join(CLASSES)}")
    policy = Policy(rate=float(rate), burst=int(burst))
    if not (math.isfinite(policy.rate) and policy.rate > 0 and policy.burst >= 1):
        raise ValueError("a rate is a positive number a second and a burst at least 1")
    return name, policy


def take(bucket: Bucket, policy: Policy, now: float, cost: int) -> Decision:
    """Refill the bucket to `now`, then take `cost` tokens if it holds them.

    A cost above the burst is charged as the burst (a full bucket), so no request waits forever.
    """
    cost = min(max(cost, 1), policy.burst)
    elapsed = max(0.0, now - bucket.at)
    bucket.tokens = min(float(policy.burst), bucket.tokens + elapsed * policy.rate)
    bucket.at = max(bucket.at, now)
    allowed = bucket.tokens >= cost
    if allowed:
        bucket.tokens -= cost
    retry_after = 0 if allowed else max(1, math.ceil((cost - bucket.tokens) / policy.rate))
    reset = math.ceil((policy.burst - bucket.tokens) / policy.rate)
    return Decision(allowed, math.floor(bucket.tokens), reset, retry_after)


def route_class(method: str, path: str) -> str | None:
    """The class a public route is limited under (`path` is its template), None for none."""
    if not path.startswith("/v1/"):
        return None
    if path.endswith("/memories:batch"):
        return BULK
    if method in ("GET", "HEAD") or (method == "POST" and path.endswith(_READ_POSTS)):
        return READ
    return WRITE


def policy_header(name: str, policy: Policy) -> str:
    """`RateLimit-Policy` as a structured-field list item: `"write";q=100;w=1`."""
    return f'"{name}";q={policy.burst};w={policy.window}'


def limit_header(name: str, decision: Decision) -> str:
    """`RateLimit` as a structured-field list item: `"write";r=42;t=1`."""
    return f'"{name}";r={decision.remaining};t={decision.reset}'
