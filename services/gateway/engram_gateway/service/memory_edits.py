"""Editing a memory: a new version through the normal write path, superseding the old one, with
exactly one edit of a version winning; and a memory's history, every version of its chain."""

from __future__ import annotations

import logging
from typing import Any

from engram_events import new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.payloads.memories import MemoryWriteRequested
from engram_gateway.domain.edits import (
    Change,
    Refusal,
    author_of,
    edited,
    refusal,
    with_pending_newer,
)
from engram_gateway.domain.ids import memory_id_for
from engram_gateway.domain.model import Caller
from engram_gateway.ports import EditClaimStore, OwningServices, SubmissionLog
from engram_gateway.service.memory_writes import MemoryWrites, Outcome
from engram_platform.problems import Problem

log = logging.getLogger(__name__)

ABANDONED = frozenset({"rejected", "withdrawn"})
"""A claimed newer version in one of these statuses while the old one is still live never
superseded it (refused, or deleted before it was stored): the next edit may take its place."""


def _conflict(refused: Refusal) -> Problem:
    """The 409 an edit of a version that is not the live one earns, naming the newer version."""
    extra: dict[str, Any] = {"memory_status": refused.status}
    if refused.superseded_by is not None:
        extra["superseded_by"] = refused.superseded_by
    return Problem(409, "edit-conflict", refused.detail, **extra)


class MemoryEdits:
    """Edits as new versions (claimed per old version before publishing) and their history."""

    def __init__(
        self,
        owners: OwningServices,
        submissions: SubmissionLog,
        claims: EditClaimStore,
        writes: MemoryWrites,
    ) -> None:
        self.owners = owners
        self.submissions = submissions
        self.claims = claims
        self.writes = writes

    async def prepare(
        self, caller: Caller, agent_id: str, memory_id: str, change: Change
    ) -> MemoryWriteRequested:
        """The new version's write: 404 when the agent has no such memory, 409 when the
        version is not the live one (naming its newer version when there is one)."""
        old = await self._memory(caller.tenant_id, agent_id, memory_id)
        refused = refusal(old)
        if refused is None:
            holder = await self.claims.holder(caller.tenant_id, memory_id)
            if (
                holder is not None
                and await self._status(caller.tenant_id, agent_id, holder) not in ABANDONED
            ):
                refused = Refusal(
                    "active", f"the memory was already edited; edit {holder}", superseded_by=holder
                )
        if refused is not None:
            raise _conflict(refused)
        newer_id = memory_id_for(caller.tenant_id, agent_id, None)
        return edited(old, change, memory_id=newer_id, author=author_of(caller))

    async def commit(self, tenant_id: str, write: MemoryWriteRequested) -> Outcome:
        """Claim the old version for this edit, then queue it (acks=all); the loser of a race
        is a 409 naming the winner, an edit to content another live memory holds a 409 naming
        it. A refused publish (or quota) gives the claim back; any other failure keeps it,
        since the event may be in Kafka."""
        old_id = str(write.supersedes)
        await self._claim(tenant_id, write.agent_id, old_id, write.memory_id)
        try:
            outcome = await self.writes.write(
                new_event(MEMORY_WRITE_REQUESTED, write, tenant_id=tenant_id)
            )
        except Problem:
            await self.claims.release(tenant_id, old_id, write.memory_id)
            raise
        if outcome.deduplicated:
            await self.claims.release(tenant_id, old_id, write.memory_id)
            raise Problem(
                409,
                "duplicate-content",
                f"another live memory, {outcome.memory_id}, already says this; edit or delete it",
                duplicate_of=outcome.memory_id,
            )
        log.info(
            "memory edit queued",
            extra={"memory_id": write.memory_id, "supersedes": old_id, "agent_id": write.agent_id},
        )
        return outcome

    async def history(self, tenant_id: str, agent_id: str, memory_id: str) -> dict[str, Any]:
        """Every version of the memory's chain, oldest first, with a newer version the gateway
        queued but the memory service has not opened yet shown `pending`."""
        path = f"/internal/v1/agents/{agent_id}/memories/{memory_id}/history"
        response = await self.owners.request("memory", "GET", path, tenant_id=tenant_id)
        if response.status_code == 404:
            if await self._submitted(tenant_id, agent_id, memory_id):
                versions = [{"memory_id": memory_id, "status": "pending"}]
                return {"memory_id": memory_id, "agent_id": agent_id, "versions": versions}
            raise Problem(404, detail="no such memory")
        if response.status_code != 200:
            raise Problem(503, "service-unavailable", "the memory service could not answer")
        found: dict[str, Any] = response.json()
        versions = found["versions"]
        last = versions[-1] if versions else None
        newer = None
        if last is not None and not last.get("superseded_by"):
            newer = await self.claims.holder(tenant_id, last["memory_id"])
        return {**found, "versions": with_pending_newer(versions, newer)}

    async def _claim(self, tenant_id: str, agent_id: str, old_id: str, newer_id: str) -> None:
        """Win the old version for this edit, or 409 naming the edit that did; a claim whose
        version never got stored (rejected, or withdrawn while pending) is taken over."""
        if await self.claims.claim(tenant_id, old_id, newer_id, agent_id):
            return
        holder = await self.claims.holder(tenant_id, old_id)
        if (
            holder is not None
            and await self._status(tenant_id, agent_id, holder) in ABANDONED
            and await self.claims.take_over(tenant_id, old_id, holder, newer_id)
        ):
            return
        raise _conflict(Refusal("active", f"the memory was already edited; edit {holder}", holder))

    async def _memory(self, tenant_id: str, agent_id: str, memory_id: str) -> dict[str, Any]:
        """The version to edit as the memory service holds it; 409 while only the gateway knows
        it (queued, not yet opened), 404 when the agent has no such memory."""
        path = f"/internal/v1/agents/{agent_id}/memories/{memory_id}"
        response = await self.owners.request("memory", "GET", path, tenant_id=tenant_id)
        if response.status_code == 200:
            found: dict[str, Any] = response.json()
            return found
        if response.status_code != 404:
            raise Problem(503, "service-unavailable", "the memory service could not answer")
        if await self._submitted(tenant_id, agent_id, memory_id):
            raise _conflict(Refusal("pending", "the memory is still being stored; retry"))
        raise Problem(404, detail="no such memory")

    async def _status(self, tenant_id: str, agent_id: str, memory_id: str) -> str:
        """A version's status; `pending` while the memory service does not hold it yet."""
        path = f"/internal/v1/agents/{agent_id}/memories/{memory_id}"
        response = await self.owners.request("memory", "GET", path, tenant_id=tenant_id)
        if response.status_code == 200:
            return str(response.json().get("status"))
        return "pending"

    async def _submitted(self, tenant_id: str, agent_id: str, memory_id: str) -> bool:
        noted = await self.submissions.get(tenant_id, "memory", memory_id)
        return noted is not None and noted.agent_id == agent_id
