"""Applying a retention policy: one selection counts the population and picks the evictions."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope
from engram_events.retention import AgentRetention
from engram_memory.domain.retention import (
    Member,
    RetentionPolicy,
    evictions,
    in_force,
    own_policies,
    policy_for,
)
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.withdrawal import withdrawn_by_event_of
from engram_memory.ports import MemoryRowStore, RetentionRuleStore
from engram_memory.service.withdrawal import Withdrawals

log = logging.getLogger(__name__)

RULES_CACHE_SECONDS = 5.0
"""How long an agent's own rules are reused before they are read again: a bulk write stores a
thousand memories of one agent in a batch, each followed by a retention check. A PUT through
this process takes effect at once; through another memory process, within this long."""


class Retention:
    """Counts and evicts with the same selection; logs counts and ids only."""

    def __init__(
        self,
        policies: list[RetentionPolicy],
        rows: MemoryRowStore,
        withdrawals: Withdrawals,
        rules: RetentionRuleStore,
    ) -> None:
        self.policies = policies
        self.rows = rows
        self.withdrawals = withdrawals
        self.rules = rules
        self._cached: dict[tuple[str, str], tuple[float, list[RetentionPolicy]]] = {}

    async def own(self, tenant_id: str, agent_id: str) -> list[RetentionPolicy]:
        """The agent's own rules as policies (read again after `RULES_CACHE_SECONDS`)."""
        key = (tenant_id, agent_id)
        now = time.monotonic()
        cached = self._cached.get(key)
        if cached is not None and now - cached[0] < RULES_CACHE_SECONDS:
            return cached[1]
        stored = await self.rules.get(tenant_id, agent_id)
        own = own_policies(agent_id, stored.rules if stored else [])
        if len(self._cached) > 10_000:
            self._cached.clear()
        self._cached[key] = (now, own)
        return own

    async def in_force(self, tenant_id: str, agent_id: str) -> dict[str, Any]:
        """What governs the agent: its own rules, and the service's defaults for other types."""
        stored = await self.rules.get(tenant_id, agent_id)
        own = own_policies(agent_id, stored.rules if stored else [])
        governing = in_force(self.policies, agent_id, own)
        return {
            "agent_id": agent_id,
            "rules": [_rule(p) for p in own],
            "defaults": [_rule(p) for p in governing[len(own) :]],
        }

    async def set_rules(
        self, tenant_id: str, agent_id: str, retention: AgentRetention
    ) -> dict[str, Any]:
        """Replace the agent's own rules; they apply from its next stored memory on."""
        await self.rules.put(tenant_id, agent_id, retention)
        self._cached.pop((tenant_id, agent_id), None)
        log.info(
            "retention set",
            extra={"tenant_id": tenant_id, "agent_id": agent_id, "rules": len(retention.rules)},
        )
        return await self.in_force(tenant_id, agent_id)

    async def enforce(
        self,
        tenant_id: str,
        agent_id: str,
        memory_type: str,
        cause: Envelope[Any],
        *,
        replayed: bool = False,
    ) -> list[Envelope[Any]]:
        """Evict what the (agent, type) policy no longer allows; returns `memory.withdrawn`s.
        A memory already expired but not yet swept is no member (the sweeper takes it). A store
        replayed after a crash also announces again what this same cause evicted before."""
        before = await self._evicted_before(tenant_id, agent_id, cause) if replayed else []
        counted, targets = await self._evictions(tenant_id, agent_id, memory_type)
        if not targets and not before:
            return []
        published = await self.withdrawals.in_handler(
            tenant_id, [*targets, *before], "retention", cause
        )
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

    async def _evictions(
        self, tenant_id: str, agent_id: str, memory_type: str
    ) -> tuple[int, list[MemoryRow]]:
        """The population's size and the rows the policy evicts now (none without a policy)."""
        own = await self.own(tenant_id, agent_id)
        policy = policy_for([*own, *self.policies], agent_id, memory_type)
        if policy is None:
            return 0, []
        selection = policy.selection(tenant_id, agent_id)
        counted = await self.rows.count(selection)
        if policy.max_age_seconds is None and policy.max_count is not None:
            if counted <= policy.max_count:
                return counted, []
        now = datetime.now(UTC)
        population = [r for r in await self.rows.select(selection) if not r.lapsed(now)]
        members = [Member(r.memory_id, _aware(r.created_at)) for r in population]
        chosen = set(evictions(policy, members, now))
        return counted, [r for r in population if r.memory_id in chosen]

    async def _evicted_before(
        self, tenant_id: str, agent_id: str, cause: Envelope[Any]
    ) -> list[MemoryRow]:
        """The agent's rows this cause evicted in a pass that staged nothing."""
        return await self.rows.select(
            withdrawn_by_event_of(tenant_id, agent_id, str(cause.event_id))
        )


def _rule(policy: RetentionPolicy) -> dict[str, Any]:
    """A policy as the API shows it: the type and its limits."""
    return {
        "type": policy.type,
        "max_count": policy.max_count,
        "max_age_seconds": policy.max_age_seconds,
    }


def _aware(moment: datetime) -> datetime:
    """Mongo returns naive UTC datetimes."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
