"""The one way a service acknowledges its part of a prune job."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from engram_events.catalog import TOMBSTONE_APPLIED
from engram_events.codec import derive_event_id, new_event
from engram_events.envelope import Envelope
from engram_events.payloads.tombstones import Stage, TombstoneApplied


def tombstone_applied(
    cause: Envelope[Any],
    *,
    prune_job_id: str,
    service: str,
    counts: dict[Stage, int],
    source_ids: Sequence[str],
    tombstoned_ids: Sequence[str],
) -> Envelope[TombstoneApplied]:
    """`tombstone.applied` for one input, its id derived from the input's (a replay repeats it)."""
    payload = TombstoneApplied(
        prune_job_id=prune_job_id,
        service=service,
        counts=counts,
        source_ids=list(source_ids),
        tombstoned_ids=list(tombstoned_ids),
    )
    return new_event(
        TOMBSTONE_APPLIED,
        payload,
        tenant_id=cause.tenant_id,
        caused_by=cause,
        event_id=derive_event_id(cause.event_id, f"tombstone-applied:{service}"),
    )


def merge_acknowledgements(
    answers: Sequence[list[Envelope[Any]] | BaseException],
) -> list[list[Envelope[Any]] | BaseException]:
    """A batch's answers with one `tombstone.applied` per (tenant, job, service) instead of one
    per input: a 10k-record prune otherwise sends the gateway tens of thousands of them.

    The merged acknowledgement covers every answered input's sources, sums their counts and
    rides in the answer of the last input it covers, so it is staged with the batch (the
    consumer stages a batch's answers in one write); its id is derived from the ids it
    replaces, so a replay of the same batch repeats it. Failed inputs keep no acknowledgement
    here; their retry answers alone.
    """
    groups: dict[tuple[str, str, str], list[tuple[int, Envelope[TombstoneApplied]]]] = {}
    for i, answer in enumerate(answers):
        if isinstance(answer, BaseException):
            continue
        for event in answer:
            if event.event_type == TOMBSTONE_APPLIED.name:
                ack = event.payload
                groups.setdefault((event.tenant_id, ack.prune_job_id, ack.service), []).append(
                    (i, event)
                )
    if all(len(members) == 1 for members in groups.values()):
        return list(answers)
    merged: list[list[Envelope[Any]] | BaseException] = [
        answer
        if isinstance(answer, BaseException)
        else [e for e in answer if e.event_type != TOMBSTONE_APPLIED.name]
        for answer in answers
    ]
    for members in groups.values():
        last = members[-1][0]
        combined = _combined([event for _, event in members])
        answer = merged[last]
        assert not isinstance(answer, BaseException)
        answer.append(combined)
    return merged


def _combined(members: list[Envelope[TombstoneApplied]]) -> Envelope[TombstoneApplied]:
    """One acknowledgement standing for several of one job and service."""
    if len(members) == 1:
        return members[0]
    counts: dict[Stage, int] = {}
    for member in members:
        for stage, n in member.payload.counts.items():
            counts[stage] = counts.get(stage, 0) + n
    ids = "\n".join(sorted(str(m.event_id) for m in members))
    last = members[-1]
    payload = last.payload.model_copy(
        update={
            "counts": counts,
            "source_ids": list(dict.fromkeys(s for m in members for s in m.payload.source_ids)),
            "tombstoned_ids": list(
                dict.fromkeys(t for m in members for t in m.payload.tombstoned_ids)
            ),
        }
    )
    digest = hashlib.sha256(ids.encode()).hexdigest()[:32]
    return last.model_copy(
        update={"event_id": derive_event_id(last.event_id, f"merged:{digest}"), "payload": payload}
    )
