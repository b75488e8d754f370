"""Valid time: one attribute's values as periods. A value stated for a later period closes an
open earlier one (a time slice); periods that overlap with different values conflict.

A period is `[starts, ends)` of each support: the record's stated `valid_from` (else when it
was recorded) to its stated `valid_to` (else where a later value closed it, else open). Only a
stated start closes, and only an open stated period is closed: two undated values overlap, as
two records disagreeing always did. Everything here reads the set of supports alone, so any
arrival order of the same records gives the same periods.
"""

from __future__ import annotations

from datetime import datetime

from engram_enrichment.domain.model import Fact, SupportRef


def close_periods(facts: list[Fact]) -> None:
    """Set each support's `closed_at`: the nearest later stated start of a different value."""
    starts = sorted(
        {(ref.valid_from, fact.fact_id) for fact in facts for ref in fact.support if ref.valid_from}
    )
    for fact in facts:
        for ref in fact.support:
            ref.closed_at = None
            if ref.valid_from is None or ref.valid_to is not None:
                continue
            later = [t for t, fid in starts if fid != fact.fact_id and t > ref.valid_from]
            ref.closed_at = min(later) if later else None


def closed(fact: Fact) -> bool:
    """Every period of the value was closed by a later one: it is no longer the value."""
    return bool(fact.support) and all(ref.closed_at is not None for ref in fact.support)


def _overlap(a: SupportRef, b: SupportRef) -> bool:
    start_a, start_b = a.starts, b.starts
    if start_a is None or start_b is None:
        return True
    end_a, end_b = a.ends, b.ends
    return (end_b is None or start_a < end_b) and (end_a is None or start_b < end_a)


def conflicting(facts: list[Fact]) -> set[str]:
    """Facts with a period overlapping a different value's period."""
    found: set[str] = set()
    for i, one in enumerate(facts):
        for other in facts[i + 1 :]:
            if any(_overlap(a, b) for a in one.support for b in other.support):
                found |= {one.fact_id, other.fact_id}
    return found


def closer_of(fact: Fact, facts: list[Fact]) -> str | None:
    """The value whose stated start closed this one's latest period."""
    end = max((ref.closed_at for ref in fact.support if ref.closed_at), default=None)
    for other in sorted(facts, key=lambda f: f.fact_id):
        if other.fact_id != fact.fact_id and any(r.valid_from == end for r in other.support):
            return other.fact_id
    return None


def span(fact: Fact) -> tuple[datetime | None, datetime | None]:
    """The fact's valid period over all its support: earliest start, latest end (None: open)."""
    starts = [ref.starts for ref in fact.support if ref.starts is not None]
    ends = [ref.ends for ref in fact.support]
    end = None if not ends or any(e is None for e in ends) else max(e for e in ends if e)
    return (min(starts) if starts else fact.valid_from), end


def holds_at(fact: Fact, at: datetime) -> bool:
    """Some period of the value contains `at`."""
    return any(
        (ref.starts is None or ref.starts <= at) and (ref.ends is None or at < ref.ends)
        for ref in fact.support
    )
