"""Deciding revisions against a source's manifest: new, revised, unchanged, or replayed.

The manifest is one small document per source item: for each record it has asserted, the
current revision, a fingerprint of its content (and of the passages it cites) and which source
version (the cause) produced it. It is written last, so a crash before it replays the same
plan; a crash after it is seen as `replayed` (same cause, same content) and its events are
staged again under the same ids.

A document version is the whole of what its source item asserts, so a record an earlier
version produced and this one does not is `absent`: its entry is marked `absent:<cause>`,
which both keeps it from being revived by a late replay and lets a replay of this very
version find (and announce again) the records it retired.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engram_extraction.domain.records import Draft

TOMBSTONED_CAUSE = "tombstoned"
"""The cause a manifest entry gets when its record is tombstoned by a prune or a deletion."""
ABSENT_PREFIX = "absent:"
"""The cause prefix of an entry whose record a later version of its source no longer asserts."""


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

    @property
    def tombstoned(self) -> bool:
        """The record is a marker now (pruned, deleted, or absent from a later version)."""
        return self.cause == TOMBSTONED_CAUSE or self.cause.startswith(ABSENT_PREFIX)


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
    absent: list[str] = field(default_factory=list)
    unchanged: int = 0
    manifest: dict[str, Entry] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Whether the manifest must be saved."""
        return bool(self.created or self.revised or self.absent)

    @property
    def announced(self) -> list[Change]:
        """Every change whose events must be staged (replays stage the same ids again)."""
        return [*self.created, *self.revised, *self.replayed]

    @property
    def written(self) -> list[Change]:
        """Every change whose record head must be (re)written."""
        return [*self.created, *self.revised]


def plan(
    drafts: list[Draft], manifest: dict[str, Entry], cause: str, *, complete: bool = False
) -> Plan:
    """Compare a source version's drafts with what the source asserted before.

    `complete` says the drafts are everything the source now asserts (a document version,
    not an import batch), so live records missing from them are retired as `absent`.
    """
    result = Plan(manifest=dict(manifest))
    for draft in drafts:
        fingerprint = draft.fingerprint
        known = manifest.get(draft.record_id)
        if known is None:
            result.created.append(Change(draft, 1))
            result.manifest[draft.record_id] = Entry(1, fingerprint, cause)
        elif known.fingerprint != fingerprint:
            revision = known.revision + 1
            result.revised.append(Change(draft, revision, known))
            result.manifest[draft.record_id] = Entry(revision, fingerprint, cause)
        elif known.tombstoned:
            result.unchanged += 1
        elif known.cause == cause:
            result.replayed.append(Change(draft, known.revision))
        else:
            result.unchanged += 1
    if complete:
        _retire_absent(result, drafts, manifest, cause)
    return result


def _retire_absent(
    result: Plan, drafts: list[Draft], manifest: dict[str, Entry], cause: str
) -> None:
    """Live records this version no longer asserts, and those this same version retired before."""
    present = {draft.record_id for draft in drafts}
    retired_here = ABSENT_PREFIX + cause
    for record_id, known in manifest.items():
        if record_id in present:
            continue
        if known.cause == retired_here:
            result.absent.append(record_id)
        elif not known.tombstoned:
            result.absent.append(record_id)
            result.manifest[record_id] = Entry(known.revision, known.fingerprint, retired_here)
