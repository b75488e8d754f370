"""A file is picked up only when two scans in a row saw the same size and mtime."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Observation:
    """What one scan saw of one file."""

    size: int
    mtime_ns: int


@dataclass
class StabilityTracker:
    """Remembers the previous scan; a writer still appending changes size or mtime."""

    previous: dict[str, Observation] = field(default_factory=dict)

    def observe(self, scan: Mapping[str, Observation]) -> list[str]:
        """The paths whose observation equals the previous scan's, in a stable order."""
        stable = sorted(path for path, seen in scan.items() if self.previous.get(path) == seen)
        self.previous = dict(scan)
        return stable

    def forget(self, path: str) -> None:
        """Drop a path once handled, so a new file at the same path waits two scans again."""
        self.previous.pop(path, None)
