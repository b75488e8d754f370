"""Applying a retention policy: one selection counts the population and picks the evictions."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope
from engram_memory.domain.retention import Member, RetentionPolicy, evictions, policy_for
from engram_memory.ports import MemoryRowStore
from engram_memory.service.withdrawal import Withdrawals

log = logging.getLogger(__name__)


class Retention:
    """Counts and evicts with the same selection; logs counts and ids only."""

    def __init__(
        self,
        policies: list[RetentionPolicy],
        rows: MemoryRowStore,
        withdrawals: Withdrawals,
    ) -> None:
        self.policies = policies
        self.rows = rows
        self.withdrawals = withdrawals

    async def enforce(
        self, tenant_id: str, agent_id: str, memory_type: str, cause: Envelope[Any]
    ) -> list[Envelope[Any]]:
        """Evict what the (agent, type) policy no longer allows; returns `memory.withdrawn`s."""
        policy = policy_for(self.policies, agent_id, memory_type)
        if policy is None:
            return []
        selection = policy.selection(tenant_id, agent_id)
        counted = await self.rows.count(selection)
        if policy.max_age_seconds is None and policy.max_count is not None:
            if counted <= policy.max_count:
                return []
        population = await self.rows.select(selection)
        members = [Member(r["memory_id"], _aware(r["created_at"])) for r in population]
        chosen = set(evictions(policy, members, datetime.now(UTC)))
        if not chosen:
            return []
        targets = [r for r in population if r["memory_id"] in chosen]
        published = await self.withdrawals.in_handler(tenant_id, targets, "retention", cause)
        log.info(
            "retention evicted",
            extra={
                "tenant_id": tenant_id,
                "agent_id": agent_id,
                "memory_type": memory_type,
                "counted": counted,
                "evicted": len(published),
            },
        )
        return published


def _aware(moment: datetime) -> datetime:
    """Mongo returns naive UTC datetimes."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
