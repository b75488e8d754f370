"""Which acknowledgements a prune job still waits for, from the ones it has (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

SELECTOR_PREVIEW = 20
"""How many ids of a list a job's status shows unless the full selector is asked for."""
SELECTION = "<selection>"
"""Stands for 'the owner of records has not yet acknowledged its selection'."""

JobKind = Literal["records", "document", "conversation"]
"""A conversation job's subject is the conversation: only memory derives from it."""


@dataclass(frozen=True)
class Ack:
    """One `tombstone.applied`: what a service covered and what it tombstoned in turn."""

    service: str
    source_ids: frozenset[str]
    tombstoned_ids: frozenset[str]
    counts: dict[str, int] = field(default_factory=dict)


SERVICES = ("extraction", "enrichment", "memory", "ingest")
CASCADE: dict[str, tuple[str, ...]] = {
    "extraction": ("enrichment", "memory"),
    "enrichment": ("memory",),
}
"""Whose tombstoned ids each service's acknowledgements make the next stages owe."""
OWING = ("enrichment", "memory")


@dataclass
class Progress:
    """A job's acknowledgements folded once each (by event id): what each service covered and
    tombstoned, the totals per stage, and what each service still owes, kept as the acks come
    in. A large prune brings tens of thousands of ids, and recomputing the differences on each
    look (the status page and the finalizer look several times a second) cost the gateway half
    its CPU during a 10k prune."""

    seen: set[str] = field(default_factory=set)
    covered: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SERVICES})
    tombstoned: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SERVICES})
    counts: dict[str, int] = field(default_factory=dict)
    owed: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in OWING})
    """Per cascade stage, the ids it must cover and has not: records for enrichment; records and
    withdrawn facts for memory (a document job's own ids are added when asked)."""
    memory_ids: set[str] = field(default_factory=set)
    """Every id memory must cover besides a document's: tombstoned records and facts."""

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
        if ack.service in self.owed:
            self.owed[ack.service] -= ack.source_ids
        for stage in CASCADE.get(ack.service, ()):
            self._expect(stage, ack.tombstoned_ids)

    def _expect(self, stage: str, ids: frozenset[str]) -> None:
        """`stage` must cover these ids too (those it already covered are not owed)."""
        if stage == "memory":
            self.memory_ids |= ids
        self.owed[stage] |= ids - self.covered[stage]

    def expected_counts(self, kind: JobKind, document_id: str | None = None) -> dict[str, int]:
        """Per service, how many ids it must cover: the cascade records → facts → memories, and
        a deleted document's passages for enrichment (a conversation job: memory covers the
        conversation, `document_id` naming it)."""
        if kind == "conversation":
            return {"memory": 1}
        counts = {
            "extraction": 1,
            "enrichment": len(self.tombstoned["extraction"]),
            "memory": len(self.memory_ids),
        }
        if kind == "document" and document_id:
            counts["ingest"] = 1
            counts["enrichment"] += 1
            counts["memory"] += document_id not in self.memory_ids
        return counts

    def pending(self, kind: JobKind, document_id: str | None = None) -> dict[str, set[str]]:
        """Per service, the ids not yet acknowledged; empty everywhere means the cascade is done."""
        if kind == "conversation":
            return {"memory": {document_id} - self.covered["memory"] if document_id else set()}
        waiting = {
            "extraction": {SELECTION} - self.covered["extraction"],
            "enrichment": set(self.owed["enrichment"]),
            "memory": set(self.owed["memory"]),
        }
        if kind == "document" and document_id:
            waiting["ingest"] = {document_id} - self.covered["ingest"]
            waiting["enrichment"] |= {document_id} - self.covered["enrichment"]
            waiting["memory"] |= {document_id} - self.covered["memory"]
        return waiting


@dataclass(frozen=True)
class Verification:
    """The owning services' answer once a cascade is acknowledged: what still references a
    tombstoned id, per service, and which services did not answer."""

    verified_empty: bool
    references: dict[str, dict[str, int]]
    unverified: list[str]


@dataclass(frozen=True)
class PruneJob:
    """A prune job as stored: its selector's preview, the acknowledgement rows listed on it,
    and, once complete, its verification."""

    key: str
    tenant_id: str
    job_id: str
    kind: JobKind
    status: Literal["running", "completed"]
    selector_preview: dict[str, Any]
    selector_sizes: dict[str, int]
    document_id: str | None
    conversation_id: str | None
    created_at: datetime
    updated_at: datetime
    ack_batches: tuple[str, ...] = ()
    verification: Verification | None = None
    completed_at: datetime | None = None

    @property
    def subject(self) -> str | None:
        """What the job waits on besides records: the deleted document, or the deleted
        conversation (None for a records job)."""
        return self.conversation_id if self.kind == "conversation" else self.document_id
