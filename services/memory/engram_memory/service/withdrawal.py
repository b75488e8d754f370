"""Withdrawing memories in a handler: the vector goes, the row stays with status and hashes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope
from engram_events.payloads.memories import WithdrawReason
from engram_memory.domain import events
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.withdrawal import (
    LIVE_STATUSES,
    stored_meanwhile,
    withdrawn_by_event,
    withdrawn_fields,
)
from engram_memory.ports import MemoryPoints, MemoryRowStore


@dataclass(frozen=True)
class Withdrawal:
    """What one input withdraws, and why."""

    targets: Sequence[MemoryRow]
    reason: WithdrawReason
    cause: Envelope[Any]
    because_of: str | None = None
    prune_job_id: str | None = None


class Withdrawals:
    """One way to withdraw inside a handler, used by retention, tombstones and deletions."""

    def __init__(self, rows: MemoryRowStore, vectors: MemoryPoints) -> None:
        self.rows = rows
        self.vectors = vectors

    async def in_handler(
        self,
        tenant_id: str,
        targets: Sequence[MemoryRow],
        reason: WithdrawReason,
        cause: Envelope[Any],
        *,
        because_of: str | None = None,
        prune_job_id: str | None = None,
    ) -> list[Envelope[Any]]:
        """Delete vectors, then strip rows; the consumer stages the returned events."""
        [published] = await self.in_handler_many(
            tenant_id, [Withdrawal(targets, reason, cause, because_of, prune_job_id)]
        )
        return published

    async def in_handler_many(
        self, tenant_id: str, withdrawals: Sequence[Withdrawal]
    ) -> list[list[Envelope[Any]]]:
        """Several inputs' withdrawals with one vector delete and one bulk row write; each
        input's events, in order. A pending memory's point is deleted again after its row is
        stripped: one stored in between by a write in flight goes too (see `Storing`). Targets
        the same input withdrew before (a replay after a crash) lose their points again and are
        announced again; their rows are not written."""
        taken = [
            [
                row
                for row in w.targets
                if row.status in LIVE_STATUSES or withdrawn_by_event(row, str(w.cause.event_id))
            ]
            for w in withdrawals
        ]
        await self.vectors.remove(tenant_id, [row.memory_id for rows in taken for row in rows])
        now = datetime.now(UTC)
        await self.rows.set_fields_many(
            tenant_id,
            [
                (
                    row.memory_id,
                    withdrawn_fields(
                        w.reason, now, w.because_of, cause=str(w.cause.event_id), was=row.status
                    ),
                )
                for w, rows in zip(withdrawals, taken, strict=True)
                for row in rows
                if row.status in LIVE_STATUSES
            ],
            drop_content=True,
        )
        if again := stored_meanwhile(row for rows in taken for row in rows):
            await self.vectors.remove(tenant_id, again)
        return [
            [
                events.withdrawn(
                    row, w.reason, w.cause, because_of=w.because_of, prune_job_id=w.prune_job_id
                )
                for row in rows
            ]
            for w, rows in zip(withdrawals, taken, strict=True)
        ]
