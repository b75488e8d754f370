"""Deleting memories through the API: one memory, or every live one of an agent or its scope."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from engram_events.memory_filter import MemoryFilter
from engram_events.payloads.memories import WithdrawReason
from engram_memory.domain import events
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.selection import Selection
from engram_memory.domain.withdrawal import LIVE_STATUSES, stored_meanwhile, withdrawn_fields
from engram_memory.ports import MemoryPoints, MemoryRowReads, StagedWithdrawals


class Deletions:
    """Withdrawals outside a handler: each row's event is staged with its update."""

    def __init__(
        self, rows: MemoryRowReads, vectors: MemoryPoints, staged: StagedWithdrawals
    ) -> None:
        self.rows = rows
        self.vectors = vectors
        self.staged = staged

    async def delete(self, tenant_id: str, agent_id: str, memory_id: str) -> bool:
        """Withdraw one memory of the agent; False when the agent has no such memory."""
        row = await self.rows.get(tenant_id, memory_id)
        if row is None or row.agent_id != agent_id:
            return False
        await self.withdraw(tenant_id, [row], "deleted")
        return True

    async def clear(self, tenant_id: str, agent_id: str, scope: MemoryFilter) -> int:
        """Withdraw every live memory of the agent in the scope; how many were withdrawn."""
        selection = Selection.of_agent(tenant_id, agent_id, statuses=LIVE_STATUSES, filter=scope)
        rows = await self.rows.select_by(selection)
        return len(await self.withdraw(tenant_id, rows, "deleted"))

    async def withdraw(
        self, tenant_id: str, targets: Sequence[MemoryRow], reason: WithdrawReason
    ) -> list[str]:
        """Delete the vectors, then strip each row and stage its event in one write, then delete
        the vectors again.

        Points go first: a crash in between leaves a live row without a point (a retried
        DELETE finishes it), never a withdrawn row whose content recall could still return.
        And again after: a pending memory's vector stored in between, by a write whose row
        update came before this one, goes too (one stored after finds the row withdrawn and
        removes its own point).
        """
        live = [row for row in targets if row.status in LIVE_STATUSES]
        ids = [row.memory_id for row in live]
        await self.vectors.remove(tenant_id, ids)
        fields = withdrawn_fields(reason, datetime.now(UTC))
        await self.staged.withdraw(
            tenant_id,
            [(row.memory_id, fields, events.withdrawn(row, reason, None)) for row in live],
        )
        if again := stored_meanwhile(live):
            await self.vectors.remove(tenant_id, again)
        return ids
