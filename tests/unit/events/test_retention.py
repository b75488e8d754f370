"""An agent's retention rules as the API takes them: one per type, each with a limit, bounded."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from engram_events.retention import MAX_RULES, AgentRetention, RetentionRule

pytestmark = pytest.mark.unit


def test_a_rule_takes_a_cap_a_max_age_or_both() -> None:
    both = AgentRetention.model_validate(
        {"rules": [{"type": "scratch", "max_count": 3, "max_age_seconds": 60}]}
    )
    assert both.rules == [RetentionRule(type="scratch", max_count=3, max_age_seconds=60)]
    assert AgentRetention.model_validate({"rules": []}).rules == []


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"rules": [{"type": "scratch"}]}, "max_count and/or max_age_seconds"),
        ({"rules": [{"type": "scratch", "max_count": 0}]}, "greater than or equal to 1"),
        ({"rules": [{"type": "scratch", "max_count": "3"}]}, "valid integer"),
        ({"rules": [{"type": "scratch", "max_age_seconds": -1}]}, "greater than or equal to 1"),
        ({"rules": [{"type": "scratch", "max_age_seconds": 10**12}]}, "less than or equal to"),
        ({"rules": [{"type": "Not Snake", "max_count": 1}]}, "pattern"),
        ({"rules": [{"type": "scratch", "max_count": 1, "agent_id": "x"}]}, "Extra inputs"),
        ({"rules": [], "extra": 1}, "Extra inputs"),
        ({}, "Field required"),
        (
            {"rules": [{"type": f"t{n}", "max_count": 1} for n in range(MAX_RULES + 1)]},
            "at most 50",
        ),
    ],
)
def test_a_bad_rule_is_refused_with_its_reason(body: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError) as refused:
        AgentRetention.model_validate(body)
    assert says in str(refused.value)


def test_a_type_named_twice_is_named() -> None:
    with pytest.raises(ValidationError) as refused:
        AgentRetention.model_validate(
            {"rules": [{"type": "notes", "max_count": 1}, {"type": "notes", "max_count": 2}]}
        )
    assert "named more than once: notes" in str(refused.value)
