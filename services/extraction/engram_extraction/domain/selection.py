"""Which records a prune selects: one predicate, used for the count and the deletion alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from engram_events.payloads.prune import PruneSelector

TOMBSTONED = "tombstoned"


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


def selects(head: dict[str, Any], tenant_id: str, selector: PruneSelector, now: datetime) -> bool:
    """The same selection as `mongo_filter`, applied to one record head."""
    if head.get("tenant_id") != tenant_id or head.get("status") == TOMBSTONED:
        return False
    if selector.record_ids and head.get("record_id") not in set(selector.record_ids):
        return False
    if selector.older_than_days is not None:
        updated = head.get("updated_at")
        if updated is None:
            return False
        if updated.tzinfo is None:
            updated = updated.replace(tzinfo=UTC)
        if updated >= now - timedelta(days=selector.older_than_days):
            return False
    if selector.record_type is not None and head.get("record_type") != selector.record_type:
        return False
    if selector.document_id is not None and head.get("document_id") != selector.document_id:
        return False
    return selector.status is None or head.get("status") == selector.status
