"""Withdrawals staged through the outbox: each row's update and its event in one write."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from engram_events import Envelope
from engram_memory.adapters.rows import MEMORIES, row_id


class EventOutbox(Protocol):
    """The part of the platform's outbox this adapter writes through."""

    async def write_many_with_events(
        self,
        collection: Any,
        writes: Sequence[tuple[Any, dict[str, Any], Sequence[Envelope[Any]]]],
        *,
        upsert: bool = True,
        scope: dict[str, Any] | None = None,
    ) -> None: ...


class OutboxWithdrawals:
    """Strips withdrawn rows (content and metadata go) and stages their events with them."""

    def __init__(self, db: Any, outbox: EventOutbox) -> None:
        self.collection = db[MEMORIES]
        self.outbox = outbox

    async def withdraw(
        self,
        tenant_id: str,
        changes: Sequence[tuple[str, Mapping[str, Any], Envelope[Any]]],
        *,
        keep_content: bool = False,
    ) -> None:
        """One outbox write for all the rows, each row's update carrying its event; with
        `keep_content` (an expiry) the content stays for audit."""
        now = datetime.now(UTC)
        dropped = {} if keep_content else {"$unset": {"content": "", "metadata": ""}}
        await self.outbox.write_many_with_events(
            self.collection,
            [
                (
                    row_id(tenant_id, memory_id),
                    {"$set": {**fields, "updated_at": now}, **dropped},
                    [event],
                )
                for memory_id, fields, event in changes
            ],
            upsert=False,
            scope={"tenant_id": tenant_id},
        )
