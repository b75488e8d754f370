"""Per-tenant storage quotas: what a write asks for, what counts once accepted, and whether it
fits (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from engram_gateway.domain.submissions import Submission

QUOTAS = ("memories", "documents", "document_bytes")


@dataclass(frozen=True)
class Usage:
    """Amounts per quota: a tenant's use, a write's demand, or a tenant's limits."""

    memories: int = 0
    documents: int = 0
    document_bytes: int = 0

    def plus(self, other: Usage) -> Usage:
        """Both amounts summed, quota by quota."""
        return Usage(*(getattr(self, q) + getattr(other, q) for q in QUOTAS))

    def negated(self) -> Usage:
        """The same amounts taken away."""
        return Usage(*(-getattr(self, q) for q in QUOTAS))

    def any(self) -> bool:
        """Whether any quota is asked for."""
        return any(getattr(self, q) for q in QUOTAS)

    def as_dict(self) -> dict[str, int]:
        """Quota name to amount."""
        return {q: getattr(self, q) for q in QUOTAS}


@dataclass(frozen=True)
class Exceeded:
    """The first quota a write would overrun."""

    quota: str
    limit: int
    used: int
    requested: int


def demand_of(kind: str, count: int, size_bytes: int = 0) -> Usage:
    """What accepting `count` writes of a submission kind asks of the quotas."""
    if kind == "memory":
        return Usage(memories=count)
    if kind == "document":
        return Usage(documents=count, document_bytes=size_bytes)
    return Usage()


def counted(demand: Usage, previous: Submission | None, version: str | None) -> Usage:
    """What an accepted write adds to the usage: all of it when its id is new (or was given back
    by a deletion), a document's bytes again when its version is new, nothing for a retry of
    what was already counted."""
    if previous is None or not previous.held:
        return demand
    if version is not None and previous.version != version:
        return Usage(document_bytes=demand.document_bytes)
    return Usage()


def given_back(released: Submission) -> Usage:
    """What deleting a counted write gives back: one memory, or one document with its last
    version's bytes (earlier versions' bytes stay counted)."""
    return demand_of(released.kind, 1, released.size_bytes).negated()


def first_exceeded(limits: Usage, used: Usage, demand: Usage) -> Exceeded | None:
    """The first quota that `used` plus `demand` would overrun, or None when the write fits."""
    for quota in QUOTAS:
        asked = getattr(demand, quota)
        if asked and getattr(used, quota) + asked > getattr(limits, quota):
            return Exceeded(quota, getattr(limits, quota), getattr(used, quota), asked)
    return None


def limits_for(defaults: Usage, overrides: Mapping[str, Any] | None) -> Usage:
    """The defaults with a tenant's own limits applied (unknown names are ignored)."""
    known = {f.name for f in fields(Usage)}
    chosen = {k: int(v) for k, v in (overrides or {}).items() if k in known}
    return replace(defaults, **chosen)


def parse_override(text: str) -> tuple[str, int]:
    """`memories=1000` as (quota, limit); ValueError names what is wrong."""
    name, sep, value = text.partition("=")
    if not sep or name not in QUOTAS:
        raise ValueError(f"give QUOTA=LIMIT with QUOTA one of {', '.join(QUOTAS)}")
    limit = int(value)
    if limit < 0:
        raise ValueError("a limit is zero or more")
    return name, limit
