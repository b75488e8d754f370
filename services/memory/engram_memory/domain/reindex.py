"""A reindex as data: which space recall reads, the move to another embedder's collection and
how far it has come (persisted whole, so a restarted service continues where it stopped)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

State = Literal["running", "done", "failed"]
LIVE = ("active", "superseded")
"""Rows whose memories have a point: the ones a reindex embeds again."""


class ReindexRunning(Exception):
    """A reindex is already under way; one at a time."""


@dataclass(frozen=True)
class Space:
    """A collection and the embedder (kind and hashing dimension) its vectors come from."""

    collection: str
    embedder: str
    hashing_dimension: int | None = None

    def as_doc(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "embedder": self.embedder,
            "hashing_dimension": self.hashing_dimension,
        }

    @classmethod
    def of(cls, doc: dict[str, Any]) -> Space:
        return cls(doc["collection"], doc["embedder"], doc.get("hashing_dimension"))


def target_collection(base: str, fingerprint: str) -> str:
    """The new collection's name: the store's base name and the target embedder's fingerprint,
    so two embedders never share one."""
    return f"{base}-{fingerprint[:12]}"


@dataclass(frozen=True)
class Reindex:
    """One move from `source` to `target`: rows walked in `_id` order after `cursor`."""

    source: Space
    target: Space
    fingerprint: str
    started_at: datetime
    state: State = "running"
    cursor: str | None = None
    done: int = 0
    total: int = 0
    finished_at: datetime | None = None
    error: str | None = None

    def advanced(self, last_id: str, walked: int) -> Reindex:
        """After a page: the cursor moves past its last row."""
        return replace(self, cursor=last_id, done=self.done + walked)

    def finished(self, now: datetime) -> Reindex:
        return replace(self, state="done", finished_at=now)

    def failed(self, now: datetime, error: str) -> Reindex:
        return replace(self, state="failed", finished_at=now, error=error)

    def rate(self, now: datetime) -> float:
        """Memories embedded per second so far."""
        seconds = ((self.finished_at or now) - self.started_at).total_seconds()
        return round(self.done / seconds, 1) if seconds > 0 else 0.0

    def view(self, now: datetime) -> dict[str, Any]:
        """What the progress endpoint shows."""
        end = self.finished_at or now
        return {
            "state": self.state,
            "embedder": self.target.embedder,
            "source_collection": self.source.collection,
            "target_collection": self.target.collection,
            "fingerprint": self.fingerprint,
            "done": self.done,
            "total": self.total,
            "started_at": self.started_at.isoformat(),
            "finished_at": None if self.finished_at is None else self.finished_at.isoformat(),
            "seconds": round((end - self.started_at).total_seconds(), 1),
            "rate": self.rate(now),
            "error": self.error,
        }

    def as_doc(self) -> dict[str, Any]:
        return {
            "source": self.source.as_doc(),
            "target": self.target.as_doc(),
            "fingerprint": self.fingerprint,
            "started_at": self.started_at,
            "state": self.state,
            "cursor": self.cursor,
            "done": self.done,
            "total": self.total,
            "finished_at": self.finished_at,
            "error": self.error,
        }

    @classmethod
    def of(cls, doc: dict[str, Any]) -> Reindex:
        return cls(
            source=Space.of(doc["source"]),
            target=Space.of(doc["target"]),
            fingerprint=doc["fingerprint"],
            started_at=doc["started_at"],
            state=doc["state"],
            cursor=doc.get("cursor"),
            done=doc.get("done", 0),
            total=doc.get("total", 0),
            finished_at=doc.get("finished_at"),
            error=doc.get("error"),
        )


def may_start(current: Reindex | None) -> None:
    """ReindexRunning while one is under way; a finished or failed one may be followed."""
    if current is not None and current.state == "running":
        raise ReindexRunning("a reindex is already running")


def counts_agree(source: int, target: int) -> bool:
    """Verification's count check: the new collection holds as many points as the old."""
    return source == target
