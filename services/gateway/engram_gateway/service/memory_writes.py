"""Writing memories: a write a live memory of the same agent and scope already holds is not
queued again (unless it allows duplicates); the memory service deduplicates once more on store,
so a write is queued anyway when it cannot be asked."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engram_events import Envelope
from engram_events.content import normalized_sha256
from engram_events.payloads.memories import MemoryWriteRequested
from engram_gateway.domain.group_commit import GroupCommit
from engram_gateway.ports import OwnerReads
from engram_gateway.service.intake import Intake
from engram_platform.problems import Problem

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """What became of one write: queued as `memory_id`, or answered by a live memory."""

    memory_id: str
    status: str
    deduplicated: bool


def _held_by(found: dict[str, Any]) -> Outcome:
    return Outcome(found["memory_id"], found["status"], deduplicated=True)


@dataclass(frozen=True)
class _Ask:
    """One single write's duplicate lookup, waiting for its trip."""

    tenant_id: str
    write: MemoryWriteRequested


class MemoryWrites:
    """Queues memory writes (acks=all) that no live memory already holds."""

    def __init__(self, owners: OwnerReads, intake: Intake) -> None:
        self.owners = owners
        self.intake = intake
        self._lookups: GroupCommit[_Ask, dict[str, Any] | None] = GroupCommit(self._look_up)

    async def write(self, event: Envelope[MemoryWriteRequested]) -> Outcome:
        """One write: queued, or the live memory that already says the same. Single writes
        arriving while a lookup is on its way are looked up together in the next, one call
        per agent (`GroupCommit`), rather than one call each."""
        write = event.payload
        found = await self._lookups.submit(_Ask(event.tenant_id, write))
        if found is not None and found["memory_id"] != write.memory_id:
            return _held_by(found)
        await self.intake.accept(
            event,
            "memory",
            write.memory_id,
            refused="the memory could not be queued; retry",
            agent_id=write.agent_id,
        )
        return Outcome(write.memory_id, "pending", deduplicated=False)

    async def write_batch(
        self, tenant_id: str, agent_id: str, events: Sequence[Envelope[MemoryWriteRequested]]
    ) -> list[Outcome]:
        """Writes of one agent with one publish, in request order; a write a live memory or an
        earlier write of the batch already holds is not queued."""
        found = await self._duplicates(tenant_id, agent_id, [e.payload for e in events])
        outcomes: list[Outcome] = []
        batch: list[Envelope[MemoryWriteRequested]] = []
        queued: dict[tuple[str | None, str | None, str], dict[str, Any]] = {}
        for event, existing in zip(events, found, strict=True):
            write = event.payload
            scope = (write.user_id, write.session_id, normalized_sha256(write.content))
            if not write.allow_duplicate and existing is None:
                existing = queued.get(scope)
            if existing is not None and existing["memory_id"] != write.memory_id:
                outcomes.append(_held_by(existing))
                continue
            outcomes.append(Outcome(write.memory_id, "pending", deduplicated=False))
            batch.append(event)
            queued.setdefault(scope, {"memory_id": write.memory_id, "status": "pending"})
        if batch:
            await self.intake.accept_many(
                batch,
                "memory",
                [(e.payload.memory_id, {"agent_id": agent_id}) for e in batch],
                tenant_id=tenant_id,
                refused="the memories could not be queued; retry the batch",
            )
        return outcomes

    async def _look_up(self, asks: Sequence[_Ask]) -> list[dict[str, Any] | None]:
        """A trip's lookups: one call per tenant and agent, all at once, answers in order."""
        by_agent: dict[tuple[str, str], list[int]] = defaultdict(list)
        for index, ask in enumerate(asks):
            by_agent[(ask.tenant_id, ask.write.agent_id)].append(index)
        answers: list[dict[str, Any] | None] = [None] * len(asks)

        async def one(tenant_id: str, agent_id: str, indexes: list[int]) -> None:
            found = await self._duplicates(tenant_id, agent_id, [asks[i].write for i in indexes])
            for index, held in zip(indexes, found, strict=True):
                answers[index] = held

        await asyncio.gather(*(one(t, a, ix) for (t, a), ix in by_agent.items()))
        return answers

    async def _duplicates(
        self, tenant_id: str, agent_id: str, writes: Sequence[MemoryWriteRequested]
    ) -> list[dict[str, Any] | None]:
        """For each write, the live memory it would duplicate (None when it opted out, when none
        does, or when the memory service could not be asked)."""
        asked = [w for w in writes if not w.allow_duplicate]
        if not asked:
            return [None] * len(writes)
        items = [
            {
                "content": w.content,
                "user_id": w.user_id,
                "session_id": w.session_id,
                "supersedes": w.supersedes,
            }
            for w in asked
        ]
        try:
            status, raw = await self.owners.read_post(
                "memory",
                f"/internal/v1/agents/{agent_id}/memories/duplicates",
                json.dumps({"items": items}).encode(),
                tenant_id=tenant_id,
            )
        except Problem:
            status, raw = 503, b""
        if status != 200:
            log.warning("dedup lookup unavailable; queued anyway", extra={"agent_id": agent_id})
            return [None] * len(writes)
        answers = iter(json.loads(raw)["found"])
        return [None if w.allow_duplicate else next(answers) for w in writes]
