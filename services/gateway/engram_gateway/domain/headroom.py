"""When a tenant's counters may be taken as remembered: far below every limit, a write cannot
overrun one, so the counters need no database read per write."""

from __future__ import annotations

from engram_gateway.domain.quotas import QUOTAS, Usage

MARGIN_SHARE = 10
"""A remembered figure is trusted only while a tenth of each asked quota's limit stays free."""
MARGIN_MIN = 1_000
"""...and at least this many units: what other gateway instances accepted within the memo's
second is unseen here, so a write admitted from memory overruns only if they took this much."""


def margin(limit: int) -> int:
    """What must stay free of a limit for remembered counters to answer."""
    return max(limit // MARGIN_SHARE, MARGIN_MIN)


def far_below(limits: Usage, used: Usage, demand: Usage) -> bool:
    """Whether `used` plus `demand` leaves every asked quota's margin free (then no fresh read
    of the counters can change the answer, short of that much written elsewhere meanwhile)."""
    for quota in QUOTAS:
        asked = getattr(demand, quota)
        if asked and getattr(used, quota) + asked + margin(getattr(limits, quota)) > getattr(
            limits, quota
        ):
            return False
    return True
