"""Listing and counting: one Selection read the same way by rows and vectors; stable cursors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram_events.memory_filter import MemoryFilter
from engram_memory.adapters.rows import selection_query
from engram_memory.adapters.vectors import payload_filter
from engram_memory.domain.listing import BadCursor, Position, decode_cursor, encode_cursor
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.selection import Selection
from engram_vectors import Exists, Range

pytestmark = pytest.mark.unit


def test_the_tenant_and_agent_are_always_in_both_queries() -> None:
    selection = Selection.of_agent("t1", "a1")
    assert selection_query(selection) == {"tenant_id": "t1", "agent_id": "a1"}
    assert payload_filter(selection) == {"tenant_id": "t1", "agent_id": ["a1"]}


def test_scope_type_and_metadata_reach_both_queries() -> None:
    wanted = MemoryFilter.model_validate(
        {
            "user_id": "u1",
            "session_id": "s1",
            "type": "fact",
            "metadata": {
                "channel": "email",
                "tier": {"in": ["gold", "silver"]},
                "amount": {"gte": 10},
                "due": {"lte": "2026-12-31T00:00:00Z"},
                "tag": {"exists": False},
            },
        }
    )
    selection = Selection.of_agent("t1", "a1", statuses=["active"], filter=wanted)
    due = datetime(2026, 12, 31, tzinfo=UTC)
    assert selection_query(selection) == {
        "tenant_id": "t1",
        "agent_id": "a1",
        "status": {"$in": ["active"]},
        "type": {"$in": ["fact"]},
        "user_id": "u1",
        "session_id": "s1",
        "metadata.channel": "email",
        "metadata.tier": {"$in": ["gold", "silver"]},
        "metadata.amount": {"$gte": 10},
        "metadata_at.due": {"$lte": due},
        "metadata.tag": None,
    }
    assert payload_filter(selection) == {
        "tenant_id": "t1",
        "agent_id": ["a1"],
        "status": ["active"],
        "type": ["fact"],
        "user_id": "u1",
        "session_id": "s1",
        "metadata.channel": "email",
        "metadata.tier": ["gold", "silver"],
        "metadata.amount": Range(gte=10, lte=None),
        "metadata_at.due": Range(gte=None, lte=due),
        "metadata.tag": Exists(False),
    }


def test_types_and_the_filter_type_must_both_hold() -> None:
    only_fact = MemoryFilter(type="fact")
    assert Selection.of_agent(
        "t", "a", types=["fact", "note"], filter=only_fact
    ).wanted_types() == ("fact",)
    assert Selection.of_agent("t", "a", types=["note"], filter=only_fact).wanted_types() == ()


def test_search_is_literal() -> None:
    query = selection_query(Selection.of_agent("t", "a", search="a.b*(c)"))
    assert query["content"] == {"$regex": r"a\.b\*\(c\)", "$options": "i"}


def test_a_cursor_round_trips_and_is_tied_to_its_order() -> None:
    at = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    row = MemoryRow("t", "m9", "a", "active", "fact", "0" * 64, at)
    cursor = encode_cursor(row, "recent")
    assert decode_cursor(cursor, "recent") == Position(at, "m9")
    with pytest.raises(BadCursor):
        decode_cursor(cursor, "oldest")
    for bad in ("", "not-a-cursor", "eyJ4IjogMX0"):
        with pytest.raises(BadCursor):
            decode_cursor(bad, "recent")
