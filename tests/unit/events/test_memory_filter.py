"""The recall/listing filter: what it accepts, and that everything else names the field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from engram_events.memory_filter import MemoryFilter, metadata_instants, parse_instant

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "raw",
    [
        {"user_id": "u1", "session_id": "s-1", "type": "fact"},
        {"metadata": {"channel": "email", "priority": 3, "score": 0.5, "urgent": True}},
        {"metadata": {"channel": {"eq": "email"}, "tier": {"in": ["gold", "silver"]}}},
        {"metadata": {"amount": {"gte": 10, "lte": 20.5}, "due": {"lte": "2026-12-31"}}},
        {"metadata": {"due": {"gte": "2026-01-01T00:00:00+02:00"}, "tag": {"exists": False}}},
    ],
)
def test_valid_filters_are_accepted(raw: dict[str, Any]) -> None:
    assert MemoryFilter.model_validate(raw).model_dump(exclude_none=True, by_alias=True)


@pytest.mark.parametrize(
    "raw, where",
    [
        ({"metadata": {"k": {"$gt": 1}}}, "$gt"),
        ({"metadata": {"$where": "1"}}, "$where"),
        ({"metadata": {"k": {"regex": ".*"}}}, "regex"),
        ({"metadata": {"k": {"eq": {"nested": 1}}}}, "eq"),
        ({"metadata": {"k": {"nested": {"deeper": 1}}}}, "nested"),
        ({"metadata": {"k": [1, 2]}}, "k"),
        ({"metadata": {"k": {"eq": [1]}}}, "eq"),
        ({"metadata": {"k": {"in": "x"}}}, "in"),
        ({"metadata": {"k": {"in": [True]}}}, "in"),
        ({"metadata": {"k": {"gte": "yesterday"}}}, "k"),
        ({"metadata": {"k": {"gte": 5, "lte": 1}}}, "k"),
        ({"metadata": {"k": {"gte": 5, "lte": "2026-01-01"}}}, "k"),
        ({"metadata": {"k": {"eq": 1, "in": [1]}}}, "k"),
        ({"metadata": {"k": {}}}, "k"),
        ({"metadata": {"a.b": 1}}, "a.b"),
        ({"user_id": {"$ne": "x"}}, "user_id"),
        ({"user_id": ["u1", "u2"]}, "user_id"),
        ({"owner": "u1"}, "owner"),
    ],
)
def test_everything_else_is_refused_naming_the_field(raw: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError) as refused:
        MemoryFilter.model_validate(raw)
    locations = [".".join(map(str, e["loc"])) for e in refused.value.errors()]
    assert any(where in loc for loc in locations), locations


def test_scalars_compare_like_types() -> None:
    parsed = MemoryFilter.model_validate({"metadata": {"n": 1, "b": True, "s": "1"}})
    conditions = parsed.conditions()
    assert conditions["n"].eq == 1 and type(conditions["n"].eq) is int
    assert conditions["b"].eq is True
    assert conditions["s"].eq == "1"


def test_timestamps_are_instants_and_naive_means_utc() -> None:
    assert parse_instant("2026-01-02") == datetime(2026, 1, 2, tzinfo=UTC)
    assert parse_instant("2026-01-02T03:00:00+02:00") == datetime(2026, 1, 2, 1, tzinfo=UTC)
    assert parse_instant("12345") is None and parse_instant("not a date at all") is None
    condition = MemoryFilter.model_validate(
        {"metadata": {"due": {"gte": "2026-01-01", "lte": "2026-02-01T00:00:00Z"}}}
    ).conditions()["due"]
    assert condition.is_time_range
    assert metadata_instants({"due": "2026-01-02", "n": 3, "s": "soon"}) == {
        "due": datetime(2026, 1, 2, tzinfo=UTC)
    }
