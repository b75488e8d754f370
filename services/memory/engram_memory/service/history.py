"""A memory's history: every version of its chain, oldest first, read from the rows."""

from __future__ import annotations

from typing import Any

from engram_memory.domain.history import MAX_VERSIONS, earliest_successor, in_chain, version_view
from engram_memory.domain.rows import MemoryRow
from engram_memory.ports import MemoryVersions


class History:
    """Walks a memory's chain back by `supersedes` and forward by `superseded_by` (or, for a
    newer version still pending, by the rows naming it in `supersedes`)."""

    def __init__(self, rows: MemoryVersions) -> None:
        self.rows = rows

    async def versions(
        self, tenant_id: str, agent_id: str, memory_id: str
    ) -> list[dict[str, Any]] | None:
        """The chain through this memory, oldest first; None when the agent has no such memory."""
        start = await self.rows.get(tenant_id, memory_id)
        if start is None or start.agent_id != agent_id:
            return None
        seen = {memory_id}
        older: list[MemoryRow] = []
        row = start
        while len(seen) < MAX_VERSIONS and row.supersedes:
            previous = await self.rows.get(tenant_id, row.supersedes)
            if previous is None or not in_chain(previous, agent_id, seen):
                break
            seen.add(previous.memory_id)
            older.append(previous)
            row = previous
        newer: list[MemoryRow] = []
        row = start
        while len(seen) < MAX_VERSIONS:
            following = await self._newer(tenant_id, agent_id, row)
            if following is None or not in_chain(following, agent_id, seen):
                break
            seen.add(following.memory_id)
            newer.append(following)
            row = following
        return [version_view(r) for r in [*reversed(older), start, *newer]]

    async def _newer(self, tenant_id: str, agent_id: str, row: MemoryRow) -> MemoryRow | None:
        """The version that replaced this one: named by `superseded_by`, else still pending."""
        if row.superseded_by:
            return await self.rows.get(tenant_id, row.superseded_by)
        found = await self.rows.successors(tenant_id, agent_id, row.memory_id, row.created_at)
        return earliest_successor(found, row.memory_id)
