"""scale_out's end-state verdict: the same state matches, a lost or doubled row does not."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from bench.scale_out import compare

pytestmark = pytest.mark.unit


def state(records: int = 3, memories: int = 2) -> dict[str, Any]:
    """A snapshot in the chaos test's shape (tuples keyed by content, counted)."""
    return {
        "documents": Counter({("scale-ingest-0.csv", "extracted"): 1}),
        "records": Counter(
            {
                ("scale-ingest-0.csv", f"row:{i}", f"s{i}", "row", "active", 1, f"h{i}"): 1
                for i in range(records)
            }
        ),
        "facts": Counter({(f"s{i}", "city", '"City 1"', "active", ()): 1 for i in range(records)}),
        "contradictions": Counter(),
        "memories": Counter(
            {("scale-agent", f"m{i}", "note", "active", (), None, None): 1 for i in range(memories)}
        ),
        "memory_vectors": Counter({("scale-agent", f"note {i}"): 1 for i in range(memories)}),
        "knowledge_vectors": Counter(),
    }


def test_the_baseline_has_no_verdict_but_its_counts() -> None:
    verdict = compare("ingest", 1, state(), None)
    assert verdict["end_state_matches_1_instance"] is None
    assert verdict["end_state"]["records"] == 3 and verdict["end_state"]["memories.active"] == 2
    assert verdict["end_state_duplicates"] == {}


def test_the_same_state_matches() -> None:
    assert compare("ingest", 3, state(), state())["end_state_matches_1_instance"] is True


def test_a_lost_record_or_a_doubled_memory_does_not() -> None:
    lost = compare("extraction", 2, state(records=2), state())
    assert lost["end_state_matches_1_instance"] is False
    assert set(lost["end_state_differences"]) == {"records", "facts"}
    doubled = state()
    doubled["memories"][("scale-agent", "m0", "note", "active", (), None, None)] += 1
    verdict = compare("embedding", 2, doubled, state())
    assert verdict["end_state_matches_1_instance"] is False
    assert verdict["end_state_duplicates"] == {"memories": 1}
