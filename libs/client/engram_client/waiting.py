"""When a polled resource is final, and the progress callback wait helpers report to."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engram_client.errors import WaitTimeout

DOCUMENT_FINAL = frozenset({"extracted", "failed", "deleted"})
PRUNE_FINAL = frozenset({"completed", "failed"})
MEMORY_PENDING = "pending"

Progress = Callable[[Any], None]
"""Called with each polled state (a Memory, Document or PruneJob model)."""


@dataclass
class Deadline:
    """A monotonic deadline and a poll interval that backs off gently up to a ceiling."""

    timeout: float
    interval: float = 0.5
    max_interval: float = 5.0

    def __post_init__(self) -> None:
        self.ends_at = time.monotonic() + self.timeout

    def next_sleep(self, what: str) -> float:
        """Seconds to sleep before the next poll; raises WaitTimeout when time is up."""
        left = self.ends_at - time.monotonic()
        if left <= 0:
            raise WaitTimeout(
                f"{what} did not finish within {self.timeout:g}s; wait longer or check its status",
                type="/problems/client-wait-timeout",
                title="Timed out waiting",
            )
        sleep = min(self.interval, left)
        self.interval = min(self.max_interval, self.interval * 1.5)
        return sleep
