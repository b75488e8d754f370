"""When to try a request again and how long to wait: exponential backoff with full jitter."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import httpx

RETRIED_STATUSES = frozenset({429, 502, 503, 504})
"""Answers that mean "not done, try later"; 502/504 come from proxies in front of the gateway."""


@dataclass
class RetryPolicy:
    """`max_attempts` counts the first try; delays grow as base * 2**n, capped, fully jittered."""

    max_attempts: int = 4
    base_delay: float = 0.25
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        """Seconds before retry `retry_number` (1-based); a server's Retry-After is honoured."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * (2 ** (retry_number - 1)))
        return self.rng.uniform(0.0, ceiling)


NO_RETRY = RetryPolicy(max_attempts=1)


def request_never_sent(exc: httpx.TransportError) -> bool:
    """Connect failures happen before any byte of the request left, so any request may retry."""
    return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


def should_retry_exception(exc: httpx.TransportError, retry_safe: bool) -> bool:
    """A broken or timed-out exchange may have been applied: only safe requests repeat it."""
    return retry_safe or request_never_sent(exc)


def should_retry_status(status: int, retry_safe: bool) -> bool:
    """A 429 refused the request before applying it, so any request repeats it; 5xx-unavailable
    may follow a partial effect, so only requests that are safe to repeat are retried."""
    return status == 429 or (retry_safe and status in RETRIED_STATUSES)
