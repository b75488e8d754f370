"""Which acknowledgements a prune job still waits for, from the ones it has (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

SELECTION = "<selection>"
"""Stands for 'the owner of records has not yet acknowledged its selection'."""

JobKind = Literal["records", "document"]


@dataclass(frozen=True)
class Ack:
    """One `tombstone.applied`: what a service covered and what it tombstoned in turn."""

    service: str
    source_ids: frozenset[str]
    tombstoned_ids: frozenset[str]
    counts: dict[str, int] = field(default_factory=dict)


def _union(acks: Iterable[Ack], service: str, attr: str) -> set[str]:
    out: set[str] = set()
    for ack in acks:
        if ack.service == service:
            out |= getattr(ack, attr)
    return out


def expected(kind: JobKind, acks: list[Ack], document_id: str | None = None) -> dict[str, set[str]]:
    """Per service, the ids it must cover: the cascade records → facts → memories."""
    records = _union(acks, "extraction", "tombstoned_ids")
    facts = _union(acks, "enrichment", "tombstoned_ids")
    need: dict[str, set[str]] = {
        "extraction": {SELECTION},
        "enrichment": set(records),
        "memory": records | facts,
    }
    if kind == "document" and document_id:
        need["ingest"] = {document_id}
        need["memory"].add(document_id)
    return need


def pending(kind: JobKind, acks: list[Ack], document_id: str | None = None) -> dict[str, set[str]]:
    """Per service, the ids not yet acknowledged; empty everywhere means the cascade is done."""
    covered = {
        svc: _union(acks, svc, "source_ids")
        for svc in ("extraction", "enrichment", "memory", "ingest")
    }
    if any(a.service == "extraction" for a in acks):
        covered["extraction"].add(SELECTION)
    return {
        svc: ids - covered.get(svc, set()) for svc, ids in expected(kind, acks, document_id).items()
    }


def stage_counts(acks: list[Ack]) -> dict[str, int]:
    """Totals per stage across every acknowledgement."""
    totals: dict[str, int] = {}
    for ack in acks:
        for stage, n in ack.counts.items():
            totals[stage] = totals.get(stage, 0) + n
    return totals
