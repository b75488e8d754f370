"""Retention: one policy per (agent, type); its one selection drives both the count and eviction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engram_events.retention import RetentionRule

RETAINED_STATUSES = ("active", "superseded")
"""Statuses a policy's population holds: everything that still has a vector."""


class RetentionPolicy(BaseModel):
    """Keep at most `max_count` memories of `type` per agent, none older than `max_age_seconds`.

    `agent_id` None applies the policy to every agent that has no policy of its own.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str = Field(min_length=1, max_length=64)
    agent_id: str | None = None
    max_count: int | None = Field(default=None, ge=1)
    max_age_seconds: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _has_a_limit(self) -> RetentionPolicy:
        if self.max_count is None and self.max_age_seconds is None:
            raise ValueError("a retention policy needs max_count and/or max_age_seconds")
        return self

    def selection(self, tenant_id: str, agent_id: str) -> dict[str, Any]:
        """The population this policy governs; the same filter counts it and evicts from it."""
        return {
            "tenant_id": tenant_id,
            "agent_id": agent_id,
            "type": self.type,
            "status": list(RETAINED_STATUSES),
        }


def policy_for(
    policies: Sequence[RetentionPolicy], agent_id: str, memory_type: str
) -> RetentionPolicy | None:
    """The agent's own policy for the type, else the type's default, else none."""
    own = [p for p in policies if p.type == memory_type and p.agent_id == agent_id]
    if own:
        return own[0]
    shared = [p for p in policies if p.type == memory_type and p.agent_id is None]
    return shared[0] if shared else None


def own_policies(agent_id: str, rules: Sequence[RetentionRule]) -> list[RetentionPolicy]:
    """An agent's own rules (set through the API) as its policies."""
    return [
        RetentionPolicy(
            type=rule.type,
            agent_id=agent_id,
            max_count=rule.max_count,
            max_age_seconds=rule.max_age_seconds,
        )
        for rule in rules
    ]


def in_force(
    defaults: Sequence[RetentionPolicy], agent_id: str, own: Sequence[RetentionPolicy]
) -> list[RetentionPolicy]:
    """The one policy per type that governs the agent: its own rule where it set one, else the
    service's (the agent's own configured one over the type-wide one)."""
    mine = {policy.type for policy in own}
    others = dict.fromkeys(p.type for p in defaults if p.type not in mine)
    chosen = [policy_for(defaults, agent_id, memory_type) for memory_type in others]
    return [*own, *(policy for policy in chosen if policy is not None)]


@dataclass(frozen=True)
class Member:
    """One memory of a policy's population, as eviction needs to see it."""

    memory_id: str
    created_at: datetime


def evictions(policy: RetentionPolicy, population: Sequence[Member], now: datetime) -> list[str]:
    """Ids to evict: everything past `max_age`, then the oldest beyond `max_count`."""
    ordered = sorted(population, key=lambda m: (m.created_at, m.memory_id))
    evict: list[str] = []
    kept = ordered
    if policy.max_age_seconds is not None:
        cutoff = now - timedelta(seconds=policy.max_age_seconds)
        evict = [m.memory_id for m in ordered if m.created_at < cutoff]
        kept = [m for m in ordered if m.created_at >= cutoff]
    if policy.max_count is not None and len(kept) > policy.max_count:
        evict += [m.memory_id for m in kept[: len(kept) - policy.max_count]]
    return evict
