"""An accepted write as the gateway notes it until the owning service has it (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Submission:
    """One accepted write: its kind and id, whose (a memory's or conversation's agent), which
    version and how many bytes (a document's), and when a deletion gave it back."""

    kind: str
    item_id: str
    agent_id: str | None = None
    version: str | None = None
    size_bytes: int = 0
    released_at: datetime | None = None

    @property
    def held(self) -> bool:
        """Still counted against the quotas: not given back by a deletion."""
        return self.released_at is None
