"""Which memories a gone source takes with it: any one source gone, or (by setting) all."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from engram_events import Envelope
from engram_events.payloads.tombstones import Stage


@dataclass(frozen=True)
class Gone:
    """One input that takes a source away: the event, the source's id, its job and stage."""

    event: Envelope[Any]
    source_id: str
    prune_job_id: str | None
    stage: Stage


def withdrawn_by(derived_from: Sequence[str], gone: Collection[str], require_all: bool) -> bool:
    """Whether a memory made from `derived_from` must go, given the sources known to be gone."""
    if not derived_from:
        return False
    if require_all:
        return all(source in gone for source in derived_from)
    return any(source in gone for source in derived_from)
