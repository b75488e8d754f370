"""The one way a service acknowledges its part of a prune job."""

from __future__ import annotations

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
