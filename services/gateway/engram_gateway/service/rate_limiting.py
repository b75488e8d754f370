"""Per-tenant rate limits, kept in this process: each gateway instance limits on its own."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping

from engram_gateway.domain.rate_limits import Bucket, Decision, Policy, take


class RateLimiter:
    """One token bucket per (tenant, class); a tenant's overrides replace the defaults.

    At most `size` buckets are kept; the least recently charged goes first (it is then full
    again at its next charge, which only errs towards allowing).
    """

    def __init__(
        self,
        defaults: Mapping[str, Policy],
        *,
        size: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.defaults = dict(defaults)
        self.size = size
        self.clock = clock
        self._buckets: OrderedDict[tuple[str, str], Bucket] = OrderedDict()

    def policy(self, route_class: str, overrides: Mapping[str, Policy]) -> Policy:
        """The policy a tenant's class runs under."""
        return overrides.get(route_class) or self.defaults[route_class]

    def charge(
        self, tenant_id: str, route_class: str, cost: int, overrides: Mapping[str, Policy]
    ) -> tuple[Policy, Decision]:
        """Take `cost` tokens from the tenant's bucket for the class, if it holds them."""
        policy = self.policy(route_class, overrides)
        now = self.clock()
        key = (tenant_id, route_class)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = Bucket(tokens=float(policy.burst), at=now)
            self._buckets[key] = bucket
        self._buckets.move_to_end(key)
        while len(self._buckets) > self.size:
            self._buckets.popitem(last=False)
        return policy, take(bucket, policy, now, cost)
