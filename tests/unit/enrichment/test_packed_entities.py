"""Entities are stored with their nested parts packed; what comes back is what was saved."""

from datetime import UTC, datetime

import pytest

from engram_enrichment.adapters.packing import PACKED
from engram_enrichment.adapters.store import OPEN_FIELDS, pack_entity, unpack_entity

pytestmark = pytest.mark.unit

ENTITY = {
    "_id": "tnt_a:carrier:c1",
    "tenant_id": "tnt_a",
    "entity_id": "carrier:c1",
    "entity_type": "carrier",
    "version": 3,
    "fact_count": 1,
    "open_contradictions": 0,
    "updated_at": datetime(2026, 12, 1, 12, 0, tzinfo=UTC),
    "facts": [{"fact_id": "carrier:c1:name:ab", "support": [{"record_id": "rec_1"}], "at": None}],
    "sections": {"s1": {"record_ids": ["rec_1"], "at": datetime(2026, 1, 2, tzinfo=UTC)}},
    "article": "# carrier:c1\n",
}


def test_only_the_fields_queries_read_stay_open() -> None:
    stored = pack_entity(ENTITY)
    assert set(stored) == set(OPEN_FIELDS) | {PACKED}
    assert stored["entity_type"] == "carrier" and stored["version"] == 3


def test_a_packed_entity_reads_back_equal_times_in_utc() -> None:
    assert unpack_entity(pack_entity(ENTITY)) == ENTITY
