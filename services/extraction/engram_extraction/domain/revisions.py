"""Deciding revisions against a source's manifest: new, revised, unchanged, or replayed.

The manifest is one small document per source item: for each record it has asserted, the
current revision, a content fingerprint and which source version (the cause) produced it.
It is written last, so a crash before it replays the same plan; a crash after it is seen as
`replayed` (same cause, same content) and its events are staged again under the same ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engram_extraction.domain.records import Draft

FINGERPRINT_CHARS = 16
TOMBSTONED_CAUSE = "tombstoned"
"""The cause a manifest entry gets when its record is tombstoned."""


@dataclass(frozen=True)
class Entry:
    """What the manifest remembers of one record."""

    revision: int
    fingerprint: str
    cause: str

    def encode(self) -> str:
        return f"{self.revision}|{self.fingerprint}|{self.cause}"

    @classmethod
    def decode(cls, raw: str) -> Entry:
        revision, fingerprint, cause = raw.split("|", 2)
        return cls(int(revision), fingerprint, cause)


@dataclass(frozen=True)
class Change:
    """A draft with the revision it becomes (and the one it replaces, if any)."""

    draft: Draft
    revision: int
    previous: Entry | None = None


@dataclass
class Plan:
    """What to write and announce for one source version."""

    created: list[Change] = field(default_factory=list)
    revised: list[Change] = field(default_factory=list)
    replayed: list[Change] = field(default_factory=list)
    unchanged: int = 0
    manifest: dict[str, Entry] = field(default_factory=dict)

    @property
    def announced(self) -> list[Change]:
        """Every change whose events must be staged (replays stage the same ids again)."""
        return [*self.created, *self.revised, *self.replayed]

    @property
    def written(self) -> list[Change]:
        """Every change whose record head must be (re)written."""
        return [*self.created, *self.revised]


def plan(drafts: list[Draft], manifest: dict[str, Entry], cause: str) -> Plan:
    """Compare a source version's drafts with what the source asserted before."""
    result = Plan(manifest=dict(manifest))
    for draft in drafts:
        fingerprint = draft.content_sha256[:FINGERPRINT_CHARS]
        known = manifest.get(draft.record_id)
        if known is None:
            result.created.append(Change(draft, 1))
            result.manifest[draft.record_id] = Entry(1, fingerprint, cause)
        elif known.fingerprint != fingerprint:
            revision = known.revision + 1
            result.revised.append(Change(draft, revision, known))
            result.manifest[draft.record_id] = Entry(revision, fingerprint, cause)
        elif known.cause == TOMBSTONED_CAUSE:
            result.unchanged += 1
        elif known.cause == cause:
            result.replayed.append(Change(draft, known.revision))
        else:
            result.unchanged += 1
    return result
