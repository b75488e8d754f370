"""A reindex as data, for any store that keeps vectors of one embedder: which space it reads,
the move to another embedder's collection and how far it has come (persisted whole, so a
restarted service continues where it stopped)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from engram_embedders.factory import EmbedderKind

T = TypeVar("T")
State = Literal["running", "done", "failed"]


class ReindexTarget(BaseModel):
    """The embedder to move a store to (`hashing_dimension`: the hashing embedder's size)."""

    model_config = ConfigDict(extra="forbid")

    embedder: EmbedderKind
    hashing_dimension: int | None = Field(default=None, ge=2, le=4096)


class Refused(Exception):
    """A reindex that does not start, with the HTTP status and problem kind a route answers."""

    status = 409
    kind = "reindex-refused"


class ReindexRunning(Refused):
    """A reindex is already under way; one at a time."""


class SameSpace(Refused):
    """The target embedder is the one the store already uses."""


class TargetUnavailable(Refused):
    """The target embedder cannot be built here (model files missing, bad options)."""

    status = 422
    kind = "embedder-unavailable"


class ReindexFailed(Exception):
    """Verification found the new collection unlike the old one."""


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
    """One move from `source` to `target`: rows walked in `_id` order after `cursor` (within
    `phase`, for a store that walks more than one collection)."""

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
    phase: str | None = None

    def advanced(self, last_id: str, walked: int) -> Reindex:
        """After a page: the cursor moves past its last row."""
        return replace(self, cursor=last_id, done=self.done + walked)

    def entered(self, phase: str) -> Reindex:
        """The walk moves on to another collection, from its first row."""
        return replace(self, phase=phase, cursor=None)

    def finished(self, now: datetime) -> Reindex:
        return replace(self, state="done", finished_at=now)

    def failed(self, now: datetime, error: str) -> Reindex:
        return replace(self, state="failed", finished_at=now, error=error)

    def rate(self, now: datetime) -> float:
        """Items embedded per second so far."""
        seconds = ((self.finished_at or now) - self.started_at).total_seconds()
        return round(self.done / seconds, 1) if seconds > 0 else 0.0

    def eta(self, now: datetime) -> float | None:
        """Seconds left at the rate so far, while running and once there is a rate."""
        rate = self.rate(now)
        if self.state != "running" or rate <= 0:
            return None
        return round(max(self.total - self.done, 0) / rate, 1)

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
            "eta_seconds": self.eta(now),
            "phase": self.phase,
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
            "phase": self.phase,
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
            phase=doc.get("phase"),
        )


def may_start(current: Reindex | None) -> None:
    """ReindexRunning while one is under way; a finished or failed one may be followed."""
    if current is not None and current.state == "running":
        raise ReindexRunning("a reindex is already running")


def counts_agree(source: object, target: object) -> bool:
    """Verification's count check: the new collection holds as many points as the old (of each
    kind, where a store counts by kind)."""
    return source == target


def sampled(sample: list[T], page: Sequence[T], keep: int = 16) -> list[T]:
    """A few items of every page kept for the spot check, at most `keep` in all (from the first
    and the latest pages)."""
    if not page:
        return sample
    kept = sample + random.sample(list(page), min(2, len(page)))
    return kept[: keep // 2] + kept[-(keep // 2) :] if len(kept) > keep else kept
