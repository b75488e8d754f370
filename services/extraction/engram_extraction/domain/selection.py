"""Which records a prune selects: one predicate, used for the count and the deletion alike."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from engram_events.payloads.prune import PruneSelector
from engram_extraction.domain.heads import TOMBSTONED, RecordHead


def mongo_filter(tenant_id: str, selector: PruneSelector, now: datetime) -> dict[str, Any]:
    """The store query for a selection (records already tombstoned are never selected)."""
    query: dict[str, Any] = {"tenant_id": tenant_id, "status": {"$ne": TOMBSTONED}}
    if selector.older_than_days is not None:
        query["updated_at"] = {"$lt": now - timedelta(days=selector.older_than_days)}
    if selector.record_type is not None:
        query["record_type"] = selector.record_type
    if selector.document_id is not None:
        query["document_id"] = selector.document_id
    if selector.status is not None:
        query["status"] = selector.status
    return query


def selection(
    tenant_id: str, selector: PruneSelector, now: datetime
) -> Callable[[RecordHead], bool]:
    """The same selection as `mongo_filter`, as a predicate on one record head; the id set and
    the cut-off are built once (rebuilt per head, a 10k-id prune spent seconds making sets)."""
    ids = frozenset(selector.record_ids) if selector.record_ids else None
    cutoff = (
        now - timedelta(days=selector.older_than_days)
        if selector.older_than_days is not None
        else None
    )

    def selects(head: RecordHead) -> bool:
        if head.tenant_id != tenant_id or head.tombstoned:
            return False
        if ids is not None and head.record_id not in ids:
            return False
        if cutoff is not None:
            updated = head.updated_at
            if updated is None:
                return False
            if updated.tzinfo is None:
                updated = updated.replace(tzinfo=UTC)
            if updated >= cutoff:
                return False
        if selector.record_type is not None and head.record_type != selector.record_type:
            return False
        if selector.document_id is not None and head.document_id != selector.document_id:
            return False
        return selector.status is None or head.status == selector.status

    return selects
