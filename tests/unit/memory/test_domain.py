"""Pure rules: content checks, the floor, retention selection and evictions, source cascades."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram_events import new_event
from engram_events.catalog import MEMORY_BULK_WRITE_REQUESTED, MEMORY_WRITE_REQUESTED
from engram_events.content import ContentLimits, content_problem
from engram_events.payloads.memories import MemoryWriteRequested
from engram_events.registry import EventType, event_type_of
from engram_memory.domain.events import embedding_request
from engram_memory.domain.retention import Member, RetentionPolicy, evictions, policy_for
from engram_memory.domain.sources import withdrawn_by
from engram_vectors.floor import apply_floor, default_floor

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "content, reason",
    [
        ("", "empty"),
        ("   ", "whitespace"),
        ("\n\t ", "whitespace"),
        ("ab", "too_short"),
        ("x" * 11, "too_long"),
        ("hello", None),
    ],
)
def test_content_is_checked_on_itself(content: str, reason: str | None) -> None:
    assert content_problem(content, ContentLimits(min_chars=3, max_chars=10)) == reason


def test_floor_drops_and_counts_below_floor_hits() -> None:
    floored = apply_floor([("a", 0.9), ("b", 0.31), ("c", 0.2999), ("d", 0.1)], 0.3)
    assert [item for item, _ in floored.kept] == ["a", "b"]
    assert floored.dropped == 2


def test_default_floor_per_model() -> None:
    assert default_floor("sentence-transformers/all-MiniLM-L6-v2") == 0.25
    assert default_floor("engram-hashing-v1-384") == 0.05


def test_policy_selection_names_one_population() -> None:
    policy = RetentionPolicy(type="conversation", max_count=2)
    selection = policy.selection("t1", "a1")
    assert selection == {
        "tenant_id": "t1",
        "agent_id": "a1",
        "type": "conversation",
        "status": ["active", "superseded"],
    }


def test_agent_policy_wins_over_the_type_default() -> None:
    shared = RetentionPolicy(type="fact", max_count=10)
    own = RetentionPolicy(type="fact", agent_id="a1", max_count=1)
    assert policy_for([shared, own], "a1", "fact") is own
    assert policy_for([shared, own], "a2", "fact") is shared
    assert policy_for([shared, own], "a1", "conversation") is None


def test_evictions_oldest_first_and_by_age() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    members = [Member(f"m{n}", now - timedelta(hours=n)) for n in range(5)]
    assert evictions(RetentionPolicy(type="x", max_count=3), members, now) == ["m4", "m3"]
    by_age = RetentionPolicy(type="x", max_age_seconds=2.5 * 3600)
    assert sorted(evictions(by_age, members, now)) == ["m3", "m4"]


def test_sources_any_or_all() -> None:
    assert withdrawn_by(["r1", "r2"], {"r1"}, require_all=False)
    assert not withdrawn_by(["r1", "r2"], {"r1"}, require_all=True)
    assert withdrawn_by(["r1", "r2"], {"r1", "r2"}, require_all=True)
    assert not withdrawn_by([], {"r1"}, require_all=False)


@pytest.mark.parametrize(
    ("write", "expected", "topic"),
    [
        (MEMORY_WRITE_REQUESTED, "embedding.requested", "engram.embeddings.v1"),
        (MEMORY_BULK_WRITE_REQUESTED, "embedding.bulk_requested", "engram.embeddings-bulk.v1"),
    ],
)
def test_a_writes_embedding_request_travels_the_lane_the_write_came_by(
    write: EventType[MemoryWriteRequested], expected: str, topic: str
) -> None:
    payload = MemoryWriteRequested(memory_id="m1", agent_id="a1", content="the carrier called")
    request = embedding_request(new_event(write, payload, tenant_id="t1"))
    assert request.event_type == expected
    assert event_type_of(request.event_type).topic == topic
    assert request.payload.items[0].item_id == "m1"
