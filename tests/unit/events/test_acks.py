"""A batch acknowledges each prune job once, covering exactly the inputs it answered."""

from __future__ import annotations

from typing import Any

import pytest

from engram_events import Envelope, new_event
from engram_events.acks import merge_acknowledgements, tombstone_applied
from engram_events.catalog import RECORD_TOMBSTONED
from engram_events.payloads.records import RecordTombstoned

pytestmark = pytest.mark.unit


def tombstoned(record_id: str, job: str = "job_1") -> Envelope[RecordTombstoned]:
    payload = RecordTombstoned(
        record_id=record_id,
        reason="prune",
        prune_job_id=job,
        content_sha256="0" * 64,
        last_revision=1,
    )
    return new_event(RECORD_TOMBSTONED, payload, tenant_id="t1")


def answer(cause: Envelope[RecordTombstoned], withdrawn: list[str]) -> list[Envelope[Any]]:
    job = cause.payload.prune_job_id
    assert job is not None
    return [
        tombstone_applied(
            cause,
            prune_job_id=job,
            service="memory",
            counts={"memories": len(withdrawn)},
            source_ids=[cause.payload.record_id],
            tombstoned_ids=withdrawn,
        )
    ]


def acks(answers: list[list[Envelope[Any]] | BaseException]) -> list[Envelope[Any]]:
    return [
        e
        for a in answers
        if not isinstance(a, BaseException)
        for e in a
        if e.event_type == "tombstone.applied"
    ]


def test_one_acknowledgement_per_job_covers_every_answered_input() -> None:
    inputs = [tombstoned("r1"), tombstoned("r2"), tombstoned("r3", job="job_2"), tombstoned("r4")]
    failed = RuntimeError("write failed")
    answers: list[list[Envelope[Any]] | BaseException] = [
        answer(inputs[0], ["m1"]),
        answer(inputs[1], []),
        answer(inputs[2], ["m3"]),
        failed,
    ]
    merged = merge_acknowledgements(answers)
    assert merged[3] is failed, "a failed input answers alone on its retry"
    by_job = {e.payload.prune_job_id: e for e in acks(merged)}
    assert set(by_job) == {"job_1", "job_2"} and len(acks(merged)) == 2
    assert by_job["job_1"].payload.source_ids == ["r1", "r2"]
    assert by_job["job_1"].payload.tombstoned_ids == ["m1"]
    assert by_job["job_1"].payload.counts == {"memories": 1}
    riding = merged[1]
    assert isinstance(riding, list) and by_job["job_1"] in riding, (
        "rides with the last input it covers"
    )
    assert by_job["job_2"] == answers[2][0], "a job with one input keeps its own acknowledgement"  # type: ignore[index]


def test_the_same_batch_merges_to_the_same_event_id() -> None:
    inputs = [tombstoned("r1"), tombstoned("r2")]
    first = acks(merge_acknowledgements([answer(e, []) for e in inputs]))
    again = acks(merge_acknowledgements([answer(e, []) for e in inputs]))
    alone = acks(merge_acknowledgements([answer(inputs[0], [])]))
    assert [e.event_id for e in first] == [e.event_id for e in again]
    assert first[0].event_id != alone[0].event_id
