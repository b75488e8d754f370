"""What a change did, stamped on the facts and contradictions it touched.

The stamp (`last_cause`) is written with the state, so the events a cause owes are read from
durable state: a retry after a partial failure announces exactly what was written.
"""

from __future__ import annotations

from datetime import datetime

from engram_enrichment.domain.model import Change, Entity, Fact, HistoryEntry


def _fact_change(before: Fact | None, after: Fact) -> Change | None:
    """How a fact differs from its previous state, if at all."""
    if before is None:
        return "created"
    if before.status != after.status or before.superseded_by != after.superseded_by:
        return "status_changed"
    if before.model_dump(exclude={"history"}) != after.model_dump(exclude={"history"}):
        return "support_changed"
    return None


def stamp(before: Entity | None, after: Entity, *, cause: str, at: datetime) -> list[str]:
    """Mark changed facts and contradictions with the cause; returns the changed fact ids."""
    previous = before.facts if before else {}
    changed: list[str] = []
    for fid, fact in sorted(after.facts.items()):
        old = previous.get(fid)
        change = _fact_change(old, fact)
        if change is None:
            continue
        fact.last_cause, fact.last_change = cause, change
        if old is None or old.status != fact.status:
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
    old_contradictions = before.contradictions if before else {}
    for cid, item in after.contradictions.items():
        old_item = old_contradictions.get(cid)
        if old_item is None or old_item.model_dump() != item.model_dump():
            item.last_cause = cause
    return changed
