"""A prune's predicate on record heads selects exactly what its selector names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram_events.payloads.prune import PruneSelector
from engram_extraction.domain.heads import RecordHead
from engram_extraction.domain.selection import mongo_filter, selection

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def _head(record_id: str, **fields: Any) -> RecordHead:
    given: dict[str, Any] = {
        "tenant_id": "t1",
        "record_id": record_id,
        "status": "active",
        "content_sha256": "0" * 64,
        "record_type": "shipment",
        "document_id": "doc-1",
        "updated_at": NOW - timedelta(days=1),
    }
    return RecordHead(**{**given, **fields})


HEADS = [
    _head("r-old", updated_at=(NOW - timedelta(days=40)).replace(tzinfo=None)),
    _head("r-new"),
    _head("r-carrier", record_type="carrier", document_id="doc-2"),
    _head("r-rejected", status="rejected"),
    _head("r-gone", status="tombstoned"),
    _head("r-other-tenant", tenant_id="t2"),
    _head("r-undated", updated_at=None),
]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (PruneSelector(record_ids=["r-new", "r-gone", "r-other-tenant", "r-missing"]), ["r-new"]),
        (PruneSelector(older_than_days=30), ["r-old"]),
        (PruneSelector(older_than_days=0, record_type="carrier"), ["r-carrier"]),
        (PruneSelector(document_id="doc-1", status="rejected"), ["r-rejected"]),
        (
            PruneSelector(record_ids=[h.record_id for h in HEADS]),
            ["r-old", "r-new", "r-carrier", "r-rejected", "r-undated"],
        ),
    ],
)
def test_the_predicate_selects_the_tenants_live_heads_the_selector_names(
    selector: PruneSelector, expected: list[str]
) -> None:
    selects = selection("t1", selector, NOW)
    assert [h.record_id for h in HEADS if selects(h)] == expected


def test_the_store_query_never_selects_tombstoned_records_or_another_tenant() -> None:
    query = mongo_filter("t1", PruneSelector(older_than_days=30, record_type="carrier"), NOW)
    assert query == {
        "tenant_id": "t1",
        "status": {"$ne": "tombstoned"},
        "updated_at": {"$lt": NOW - timedelta(days=30)},
        "record_type": "carrier",
    }
