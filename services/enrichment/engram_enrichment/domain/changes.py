"""What a change did, stamped on the facts and contradictions it touched.

The stamp (`last_cause`) is written with the state, so the events a cause owes are read from
durable state: a retry after a partial failure announces exactly what was written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any

from engram_enrichment.domain.model import Change, Entity, Fact, HistoryEntry

_COMPARED = tuple(name for name in Fact.model_fields if name != "history")
_STATUS = _COMPARED.index("status")
_SUPERSEDED_BY = _COMPARED.index("superseded_by")
_COMPARED_VALUES = attrgetter(*_COMPARED)


@dataclass(frozen=True)
class Snapshot:
    """What `stamp` compares: each fact's fields but its history, each contradiction's dump."""

    facts: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    contradictions: dict[str, dict[str, Any]] = field(default_factory=dict)


def _fields(fact: Fact) -> tuple[Any, ...]:
    """A fact's compared fields; lists are copied, since support is replaced, never edited."""
    return tuple(tuple(v) if v.__class__ is list else v for v in _COMPARED_VALUES(fact))


def snapshot(entity: Entity | None) -> Snapshot:
    """The entity's state as `stamp` needs it, far cheaper than a deep copy."""
    if entity is None:
        return Snapshot()
    return Snapshot(
        facts={fid: _fields(fact) for fid, fact in entity.facts.items()},
        contradictions={cid: item.model_dump() for cid, item in entity.contradictions.items()},
    )


def _fact_change(before: tuple[Any, ...] | None, after: tuple[Any, ...]) -> Change | None:
    """How a fact differs from its previous state, if at all."""
    if before is None:
        return "created"
    if before[_STATUS] != after[_STATUS] or before[_SUPERSEDED_BY] != after[_SUPERSEDED_BY]:
        return "status_changed"
    if before != after:
        return "support_changed"
    return None


def stamp(before: Snapshot, after: Entity, *, cause: str, at: datetime) -> list[str]:
    """Mark changed facts and contradictions with the cause; returns the changed fact ids."""
    changed: list[str] = []
    for fid, fact in sorted(after.facts.items()):
        old = before.facts.get(fid)
        change = _fact_change(old, _fields(fact))
        if change is None:
            continue
        fact.last_cause, fact.last_change = cause, change
        if old is None or old[_STATUS] != fact.status:
            fact.history.append(
                HistoryEntry(
                    at=at,
                    status=fact.status,
                    value_sha256=fact.value_sha256,
                    support_count=len(fact.support),
                    cause=cause,
                )
            )
        changed.append(fid)
    for cid, item in after.contradictions.items():
        old_item = before.contradictions.get(cid)
        if old_item is None or old_item != item.model_dump():
            item.last_cause = cause
    return changed
