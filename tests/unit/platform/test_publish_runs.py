"""The outbox relay publishes runs of events in one span without reordering any topic."""

from __future__ import annotations

from typing import Any

import pytest

from engram_platform.sending import publish_runs as _publish_runs

pytestmark = pytest.mark.unit


def _entry(n: int, topic: str, origin: str, *, tombstone: bool = False) -> dict[str, Any]:
    return {
        "_id": f"e{n}",
        "topic": topic,
        "key": f"k{n % 3}",
        "value": None if tombstone else b"{}",
        "event_type": "kafka.tombstone" if tombstone else "record.upserted",
        "headers": {"traceparent": origin},
    }


def test_a_documents_records_on_two_topics_make_two_runs() -> None:
    entries = [_entry(n, topic, "tp-a") for n in range(25) for topic in ("records", "events")]
    runs = _publish_runs(entries)
    assert [len(run) for run in runs] == [25, 25]
    assert [{d["topic"] for d in run} for run in runs] == [{"records"}, {"events"}]


def test_order_within_each_topic_is_kept_and_origins_split_runs() -> None:
    entries = [
        _entry(1, "records", "tp-a"),
        _entry(2, "records", "tp-b"),
        _entry(3, "events", "tp-a"),
        _entry(4, "records", "tp-a"),
        _entry(5, "records", "tp-a", tombstone=True),
        _entry(6, "records", "tp-a"),
    ]
    runs = _publish_runs(entries)
    flat = [d["_id"] for run in runs for d in run]
    by_topic = {
        t: [i for i in flat if next(e for e in entries if e["_id"] == i)["topic"] == t]
        for t in ("records", "events")
    }
    assert by_topic == {"records": ["e1", "e2", "e4", "e5", "e6"], "events": ["e3"]}
    assert [[d["_id"] for d in run] for run in runs] == [
        ["e1"],
        ["e2"],
        ["e4"],
        ["e5"],
        ["e6"],
        ["e3"],
    ]
