"""Cascades: when a source (record, fact, document, conversation) or an agent goes, the memories
derived from it or held by it are withdrawn, and a prune job hears what its source took."""

from __future__ import annotations

import logging
from typing import Any

from engram_events import Envelope
from engram_events.acks import tombstone_applied
from engram_events.catalog import MEMORY_WITHDRAWN
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.sources import Gone, withdrawn_by
from engram_memory.domain.withdrawal import (
    LIVE_STATUSES,
    held_a_vector,
    withdrawn_by_event_of,
)
from engram_memory.ports import MemoryRowStore, RetentionRuleStore
from engram_memory.service.withdrawal import Withdrawal, Withdrawals

log = logging.getLogger(__name__)

SERVICE = "memory"


class Cascades:
    """Withdraws what goes with a source or an agent, in one write per tenant."""

    def __init__(
        self,
        rows: MemoryRowStore,
        withdrawals: Withdrawals,
        rules: RetentionRuleStore,
        *,
        require_all_sources: bool = False,
    ) -> None:
        self.rows = rows
        self.withdrawals = withdrawals
        self.rules = rules
        self.require_all_sources = require_all_sources

    async def agent_deleted(
        self, tenant: str, agent_id: str, cause: Envelope[Any]
    ) -> list[Envelope[Any]]:
        """A deleted agent's memories are withdrawn (rows keep status and hashes) and its own
        retention rules go."""
        live = {"tenant_id": tenant, "agent_id": agent_id, "status": list(LIVE_STATUSES)}
        targets = await self.rows.select(live)
        targets += await self.rows.select(
            withdrawn_by_event_of(tenant, agent_id, str(cause.event_id))
        )
        published = await self.withdrawals.in_handler(tenant, targets, "agent_deleted", cause)
        await self.rules.forget(tenant, agent_id)
        log.info("agent deleted", extra={"agent_id": agent_id, "withdrawn": len(published)})
        return published

    async def sources_gone(self, inputs: list[Gone]) -> list[list[Envelope[Any]]]:
        """Each input's answer, as if handled one after another, with one lookup and one
        withdrawal write per tenant."""
        results: list[list[Envelope[Any]]] = [[] for _ in inputs]
        for tenant in dict.fromkeys(g.event.tenant_id for g in inputs):
            mine = [i for i, g in enumerate(inputs) if g.event.tenant_id == tenant]
            owed = await self._owed(tenant, [inputs[i] for i in mine])
            withdrawn = await self.withdrawals.in_handler_many(
                tenant,
                [
                    Withdrawal(
                        targets,
                        "source_tombstoned",
                        inputs[i].event,
                        because_of=inputs[i].source_id,
                        prune_job_id=inputs[i].prune_job_id,
                    )
                    for i, targets in zip(mine, owed, strict=True)
                ],
            )
            for i, targets, published in zip(mine, owed, withdrawn, strict=True):
                results[i] = published + _acknowledged(inputs[i], targets, len(published))
        log.info(
            "sources tombstoned",
            extra={
                "count": len(inputs),
                "withdrawn": sum(
                    1 for r in results for e in r if e.event_type == MEMORY_WITHDRAWN.name
                ),
            },
        )
        return results

    async def _owed(self, tenant: str, inputs: list[Gone]) -> list[list[MemoryRow]]:
        """The live memories each input takes, in order (a memory goes with the first), and
        those it withdrew before (a replay after a crash: announced again)."""
        sources = [g.source_id for g in inputs]
        causes = {str(g.event.event_id): n for n, g in enumerate(inputs)}
        found = await self.rows.derived_via_index(tenant, sources, (*LIVE_STATUSES, "withdrawn"))
        candidates = [row for row in found if row.status in LIVE_STATUSES]
        before = [row for row in found if row.withdrawn_cause in causes]
        gone: set[str] = set()
        if self.require_all_sources and candidates:
            named = sorted({s for row in candidates for s in row.derived_from})
            gone = await self.rows.gone(tenant, named)
        await self.rows.mark_gone(tenant, sources)
        taken: set[str] = set()
        owed: list[list[MemoryRow]] = []
        for source in sources:
            gone.add(source)
            counted = gone if self.require_all_sources else {source}
            targets = [
                row
                for row in candidates
                if row.memory_id not in taken
                and withdrawn_by(row.derived_from, counted, self.require_all_sources)
            ]
            taken.update(row.memory_id for row in targets)
            owed.append(targets)
        for row in before:
            owed[causes[str(row.withdrawn_cause)]].append(row)
        return owed


def _acknowledged(gone: Gone, targets: list[MemoryRow], withdrawn: int) -> list[Envelope[Any]]:
    """The prune job's acknowledgement of one source gone, when it came from a job."""
    if not gone.prune_job_id:
        return []
    had_vectors = sum(1 for row in targets if held_a_vector(row))
    return [
        tombstone_applied(
            gone.event,
            prune_job_id=gone.prune_job_id,
            service=SERVICE,
            counts={"memories": withdrawn, "vectors": had_vectors},
            source_ids=[gone.source_id],
            tombstoned_ids=[row.memory_id for row in targets],
        )
    ]
