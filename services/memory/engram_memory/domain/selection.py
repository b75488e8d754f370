"""Which memories a listing, count, scope clear or recall considers: one value, two readers.

The rows adapter turns a Selection into a Mongo query and the vectors adapter into a payload
filter, so a count and the listing (or the clear) it describes always select the same set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from engram_events.memory_filter import MemoryFilter


@dataclass(frozen=True)
class Selection:
    """The tenant and its agents always; statuses, types, scope and metadata when given."""

    tenant_id: str
    agent_ids: tuple[str, ...]
    statuses: tuple[str, ...] | None = None
    types: tuple[str, ...] | None = None
    filter: MemoryFilter = field(default_factory=MemoryFilter)
    search: str | None = None
    """A literal, case-insensitive substring of the content (listing only)."""
    at: datetime | None = None
    """The instant statuses are read at: a live row past its `expires_at` then counts as
    `expired` (listings and counts); None compares the stored status only."""

    @classmethod
    def of_agent(
        cls,
        tenant_id: str,
        agent_id: str,
        *,
        statuses: Sequence[str] | None = None,
        types: Sequence[str] | None = None,
        filter: MemoryFilter | None = None,
        search: str | None = None,
    ) -> Selection:
        """One agent's memories."""
        return cls(
            tenant_id,
            (agent_id,),
            tuple(statuses) if statuses else None,
            tuple(types) if types else None,
            filter or MemoryFilter(),
            search or None,
        )

    def wanted_types(self) -> tuple[str, ...] | None:
        """The types allowed: `types` and the filter's `type` must both hold."""
        if self.filter.type is None:
            return self.types
        if self.types is not None and self.filter.type not in self.types:
            return ()
        return (self.filter.type,)
