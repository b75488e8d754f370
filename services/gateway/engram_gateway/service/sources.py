"""Checking the ids a memory write names before it is queued: one batched lookup per owning
service named, all at once, and the gateway's own notes only for what the owners lack."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from engram_gateway.domain.sources import (
    SUBMITTED_AS,
    Found,
    Naming,
    asked,
    foreign_sources,
    foreign_supersedes,
)
from engram_gateway.ports import OwningServices, SubmissionReads
from engram_platform.internal import KNOWN_PATH
from engram_platform.problems import Problem


class SourceCheck:
    """Refuses a write naming another tenant's (or no) source, or another agent's memory."""

    def __init__(self, owners: OwningServices, submissions: SubmissionReads) -> None:
        self.owners = owners
        self.submissions = submissions

    async def check(
        self, tenant_id: str, agent_id: str, writes: Sequence[Naming], where: Sequence[str]
    ) -> None:
        """404 when a `supersedes` is not this agent's memory; else 422 naming every
        `derived_from` entry that is not the tenant's. Nothing named: no lookup at all."""
        if not any(w.derived_from or w.supersedes is not None for w in writes):
            return
        found = await self._found(tenant_id, asked(writes))
        superseding = foreign_supersedes(writes, found, agent_id, where)
        if superseding:
            raise Problem(404, detail=superseding[0]["msg"], errors=superseding[:20])
        sources = foreign_sources(writes, found, where)
        if sources:
            raise Problem(422, detail=sources[0]["msg"], errors=sources[:20])

    async def _found(self, tenant_id: str, by_owner: dict[str, list[str]]) -> Found:
        answers = await asyncio.gather(
            *(self._ask(owner, tenant_id, ids) for owner, ids in by_owner.items())
        )
        known: set[str] = set()
        agents: dict[str, str] = {}
        for answer in answers:
            known.update(answer.get("known", []))
            agents.update(answer.get("agents", {}))
        lacking = [
            (kind, item_id)
            for owner, ids in by_owner.items()
            for item_id in ids
            if item_id not in known
            for kind in SUBMITTED_AS.get(owner, ())
        ]
        if lacking:
            for (_, item_id), note in (await self.submissions.held(tenant_id, lacking)).items():
                known.add(item_id)
                if note.agent_id is not None:
                    agents[item_id] = note.agent_id
        return Found(known, agents)

    async def _ask(self, owner: str, tenant_id: str, ids: list[str]) -> dict[str, Any]:
        """An owner's answer; one that cannot answer makes the write a 503, never a pass."""
        response = await self.owners.request(
            owner, "POST", KNOWN_PATH, tenant_id=tenant_id, json={"ids": ids}
        )
        if response.status_code != 200:
            raise Problem(
                503,
                "service-unavailable",
                f"the {owner} service could not check the ids the write names; retry",
            )
        answer: dict[str, Any] = response.json()
        return answer
