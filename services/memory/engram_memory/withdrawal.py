"""Withdrawing memories: the vector goes, the row stays with status and hashes only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope
from engram_events.payloads.memories import WithdrawReason
from engram_memory import events
from engram_memory.adapters.rows import MemoryRows
from engram_memory.adapters.vectors import MemoryVectors
from engram_platform.outbox import Outbox

LIVE_STATUSES = ("pending", "active", "superseded")


def withdrawn_fields(reason: str, because_of: str | None = None) -> dict[str, Any]:
    """What a withdrawn row records about why it left."""
    return {
        "status": "withdrawn",
        "withdrawn_reason": reason,
        "withdrawn_because_of": because_of,
        "withdrawn_at": datetime.now(UTC),
    }


@dataclass(frozen=True)
class Withdrawal:
    """What one input withdraws, and why."""

    targets: Sequence[dict[str, Any]]
    reason: WithdrawReason
    cause: Envelope[Any]
    because_of: str | None = None
    prune_job_id: str | None = None


class Withdrawals:
    """One way to withdraw, used by retention, tombstones and the delete API."""

    def __init__(self, rows: MemoryRows, vectors: MemoryVectors) -> None:
        self.rows = rows
        self.vectors = vectors

    async def in_handler(
        self,
        tenant_id: str,
        targets: Sequence[dict[str, Any]],
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
        input's events, in order."""
        live = [
            [row for row in w.targets if row.get("status") in LIVE_STATUSES] for w in withdrawals
        ]
        await self.vectors.remove(tenant_id, [row["memory_id"] for rows in live for row in rows])
        await self.rows.set_fields_many(
            tenant_id,
            [
                (row["memory_id"], withdrawn_fields(w.reason, w.because_of))
                for w, rows in zip(withdrawals, live, strict=True)
                for row in rows
            ],
            drop_content=True,
        )
        return [
            [
                events.withdrawn(
                    row, w.reason, w.cause, because_of=w.because_of, prune_job_id=w.prune_job_id
                )
                for row in rows
            ]
            for w, rows in zip(withdrawals, live, strict=True)
        ]

    async def on_request(
        self,
        outbox: Outbox,
        tenant_id: str,
        targets: Sequence[dict[str, Any]],
        reason: WithdrawReason,
    ) -> list[str]:
        """Delete the vectors, then strip each row and stage its event in one write.

        Points go first: a crash in between leaves a live row without a point (a retried
        DELETE finishes it), never a withdrawn row whose content recall could still return.
        """
        live = [row for row in targets if row.get("status") in LIVE_STATUSES]
        await self.vectors.remove(tenant_id, [row["memory_id"] for row in live])
        now = datetime.now(UTC)
        update = {
            "$set": {**withdrawn_fields(reason), "updated_at": now},
            "$unset": {"content": "", "metadata": ""},
        }
        await outbox.write_many_with_events(
            self.rows.collection,
            [(row["_id"], update, [events.withdrawn(row, reason, None)]) for row in live],
            upsert=False,
            scope={"tenant_id": tenant_id},
        )
        return [row["memory_id"] for row in live]
