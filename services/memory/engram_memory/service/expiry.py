"""The expiry sweeper: lapsed memories lose their vectors, then read `expired` for good."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

from engram_memory.domain import events
from engram_memory.domain.expiry import expired_fields, expiry_entries
from engram_memory.ports import AuditRecorder, LapsedRows, MemoryPoints, StagedWithdrawals

log = logging.getLogger(__name__)

MAX_BATCHES = 20
"""Batches one sweep takes at most; the rest waits for the next sweep, so a tick stays short."""


class ExpirySweeper:
    """Reads already hide a lapsed memory; the sweep removes its point and marks its row.

    Each memory's audit entry is written first (a failure leaves the batch for the next sweep),
    then points go, then the row is marked with its `memory.withdrawn` staged in the same
    write: a crash in between leaves a live, lapsed row without a point, which the next sweep
    selects again and finishes (removing an absent point is a no-op; the event's id derives
    from the memory, so a repeat is one event)."""

    def __init__(
        self,
        rows: LapsedRows,
        vectors: MemoryPoints,
        staged: StagedWithdrawals,
        audit: AuditRecorder,
        *,
        batch: int = 500,
    ) -> None:
        self.rows = rows
        self.vectors = vectors
        self.staged = staged
        self.audit = audit
        self.batch = batch

    async def sweep(self, now: datetime | None = None) -> int:
        """Expire the memories lapsed by `now`, a batch at a time; how many were expired."""
        at = now or datetime.now(UTC)
        expired = 0
        for _ in range(MAX_BATCHES):
            rows = await self.rows.lapsed(at, self.batch)
            await self.audit.record(expiry_entries(rows, at))
            for tenant_id in dict.fromkeys(row.tenant_id for row in rows):
                mine = [row for row in rows if row.tenant_id == tenant_id]
                await self.vectors.remove(tenant_id, [row.memory_id for row in mine])
                await self.staged.withdraw(
                    tenant_id,
                    [
                        (
                            row.memory_id,
                            expired_fields(at),
                            events.withdrawn(row, "expired", None),
                        )
                        for row in mine
                    ],
                    keep_content=True,
                )
            expired += len(rows)
            if len(rows) < self.batch:
                break
        if expired:
            log.info("memories expired", extra={"expired": expired})
        return expired

    async def run(self, every: float) -> None:
        """Sweep every `every` seconds until cancelled; a failed sweep is retried next time."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.sweep()
            except Exception as exc:
                log.warning("expiry sweep failed", extra={"error_type": type(exc).__name__})
