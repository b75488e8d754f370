"""A write's expiry: `ttl_seconds` or a future `expires_at` within ten years, never both, and
the event always carries the instant."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from engram_gateway.api.memory_writes import WriteMemories, WriteMemory
from engram_gateway.domain.expiry import MAX_TTL_SECONDS

pytestmark = pytest.mark.unit

LATER = (datetime.now(UTC) + timedelta(days=1)).isoformat()


def test_ttl_seconds_becomes_expires_at_counted_from_now() -> None:
    now = datetime(2026, 12, 5, tzinfo=UTC)
    fields = WriteMemory.model_validate({"content": "x", "ttl_seconds": 5}).write(now)
    assert fields["expires_at"] == now + timedelta(seconds=5)
    assert "ttl_seconds" not in fields


def test_expires_at_is_kept_and_no_expiry_is_none() -> None:
    given = WriteMemory.model_validate_json(f'{{"content": "x", "expires_at": "{LATER}"}}')
    assert given.write(datetime.now(UTC))["expires_at"] == datetime.fromisoformat(LATER)
    assert WriteMemory(content="x").write(datetime.now(UTC))["expires_at"] is None


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"ttl_seconds": 0}, "greater than or equal to 1"),
        ({"ttl_seconds": -5}, "greater than or equal to 1"),
        ({"ttl_seconds": MAX_TTL_SECONDS + 1}, "less than or equal to"),
        ({"ttl_seconds": "5"}, "valid integer"),
        ({"ttl_seconds": 2.5}, "valid integer"),
        ({"ttl_seconds": 5, "expires_at": LATER}, "not both"),
        ({"expires_at": "2020-01-01T00:00:00Z"}, "in the future"),
        ({"expires_at": "2999-01-01T00:00:00Z"}, "ten years"),
        ({"expires_at": "2030-01-01T00:00:00"}, "timezone"),
        ({"ttl": 5}, "Extra inputs"),
    ],
)
def test_a_bad_expiry_is_refused_with_its_reason(extra: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError) as refused:
        WriteMemory.model_validate({"content": "x", **extra})
    assert says in str(refused.value)
    with pytest.raises(ValidationError):
        WriteMemories.model_validate({"memories": [{"content": "y"}, {"content": "x", **extra}]})
