"""Which acknowledgements a prune job still waits for, from the ones it has (pure)."""

from __future__ import annotations

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


SERVICES = ("extraction", "enrichment", "memory", "ingest")


@dataclass
class Progress:
    """A job's acknowledgements folded once each (by event id): what each service covered and
    tombstoned, and the totals per stage; a large prune brings tens of thousands of them, and
    re-merging every one on each look cost the gateway most of a core."""

    seen: set[str] = field(default_factory=set)
    covered: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SERVICES})
    tombstoned: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SERVICES})
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, event_id: str, ack: Ack) -> None:
        """Fold one acknowledgement; a redelivered one (same event id) counts once."""
        if event_id in self.seen:
            return
        self.seen.add(event_id)
        self.covered.setdefault(ack.service, set()).update(ack.source_ids)
        self.tombstoned.setdefault(ack.service, set()).update(ack.tombstoned_ids)
        for stage, n in ack.counts.items():
            self.counts[stage] = self.counts.get(stage, 0) + n
        if ack.service == "extraction":
            self.covered["extraction"].add(SELECTION)

    def expected(self, kind: JobKind, document_id: str | None = None) -> dict[str, set[str]]:
        """Per service, the ids it must cover: the cascade records → facts → memories."""
        records = self.tombstoned["extraction"]
        facts = self.tombstoned["enrichment"]
        need: dict[str, set[str]] = {
            "extraction": {SELECTION},
            "enrichment": set(records),
            "memory": records | facts,
        }
        if kind == "document" and document_id:
            need["ingest"] = {document_id}
            need["memory"].add(document_id)
        return need

    def pending(self, kind: JobKind, document_id: str | None = None) -> dict[str, set[str]]:
        """Per service, the ids not yet acknowledged; empty everywhere means the cascade is done."""
        return {
            svc: ids - self.covered.get(svc, set())
            for svc, ids in self.expected(kind, document_id).items()
        }
