"""Dedup at write time: the first write of some content in a scope claims its slot; a later
write of the same content, while that memory is live, is a duplicate and stores nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engram_events.payloads.memories import MemoryWriteRequested
from engram_memory.domain.dedup import dedup_key, is_duplicate_of
from engram_memory.domain.rows import MemoryRow
from engram_memory.ports import DedupSlotStore, MemoryRowStore


@dataclass(frozen=True)
class Candidate:
    """What the gateway asks about before it queues a write."""

    content: str
    user_id: str | None = None
    session_id: str | None = None
    supersedes: str | None = None


class Dedup:
    """Slots name the memory holding each (agent, scope, content); rows say if it is live."""

    def __init__(self, slots: DedupSlotStore, rows: MemoryRowStore) -> None:
        self.slots = slots
        self.rows = rows

    async def find(
        self, tenant_id: str, agent_id: str, candidates: Sequence[Candidate]
    ) -> list[MemoryRow | None]:
        """For each candidate, the live memory it would duplicate (its row), or None."""
        keys = [dedup_key(agent_id, c.user_id, c.session_id, c.content) for c in candidates]
        holders = await self.slots.holders(tenant_id, keys)
        rows = await self.rows.get_many(tenant_id, list(dict.fromkeys(holders.values())))
        found: list[MemoryRow | None] = []
        for key, candidate in zip(keys, candidates, strict=True):
            row = rows.get(holders.get(key, ""))
            live = row is not None and row.agent_id == agent_id
            found.append(row if live and is_duplicate_of(row, candidate.supersedes) else None)
        return found

    async def duplicates(
        self, tenant_id: str, writes: Sequence[tuple[dict[str, Any], MemoryWriteRequested]]
    ) -> dict[str, str]:
        """Claim the slots of these writes (in order); returns `{memory_id: holder}` for each
        write that duplicates a live memory, a write earlier in the batch included. The claim
        comes first, without a read (new content's slots are free); rows are read only for slots
        held by another write (a slot just won names a row this batch is about to write, and a
        holder whose row is not written yet is in flight), so a batch of new content costs one
        insert and no read."""
        by_key: dict[str, list[MemoryWriteRequested]] = {}
        for _, request in writes:
            if not request.allow_duplicate:
                key = dedup_key(
                    request.agent_id, request.user_id, request.session_id, request.content
                )
                by_key.setdefault(key, []).append(request)
        claims = [(key, requests[0].memory_id) for key, requests in by_key.items()]
        holders, won_keys = await self.slots.claim(tenant_id, claims) if claims else ({}, set())
        won = {holders[key] for key in won_keys}
        rows = await self.rows.get_many(tenant_id, [h for h in holders.values() if h not in won])
        in_flight = {holder for holder in holders.values() if holder not in rows}
        found: dict[str, str] = {}
        for key, requests in by_key.items():
            holder = holders[key]
            for request in requests:
                if holder == request.memory_id:
                    continue
                if _duplicated_by(holder, request, rows, in_flight):
                    found[request.memory_id] = holder
                    continue
                holder = await self.slots.hand_over(tenant_id, key, holder, request.memory_id)
                if holder == request.memory_id:
                    in_flight.add(holder)
                    continue
                rows.update(await self.rows.get_many(tenant_id, [holder]))
                if _duplicated_by(holder, request, rows, in_flight):
                    found[request.memory_id] = holder
        return found


def _duplicated_by(
    holder: str,
    request: MemoryWriteRequested,
    rows: dict[str, MemoryRow],
    in_flight: set[str],
) -> bool:
    """Whether the slot's holder makes this write a duplicate; a holder whose row this batch is
    about to write (no row yet) is live, as far as dedup is concerned."""
    row = rows.get(holder)
    if row is None:
        return holder in in_flight and holder != request.supersedes
    return is_duplicate_of(row, request.supersedes)
