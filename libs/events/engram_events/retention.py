"""An agent's retention policy as the API takes it: per memory type, a cap and/or a max age.

Part of the public contract (the gateway validates it at the door, the memory service again):
unknown fields, a rule with neither limit, a type named twice or bounds broken are validation
errors naming the field.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator

from engram_events.payloads.memories import MemoryType

MAX_RULES = 50
MAX_COUNT = 1_000_000
MAX_AGE_SECONDS = 3650 * 86_400
"""Ten years, the furthest a memory's expiry may lie too."""


class RetentionRule(BaseModel):
    """Keep at most `max_count` of the agent's memories of `type`, none older than
    `max_age_seconds` (at least one of the two)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: MemoryType
    max_count: StrictInt | None = Field(default=None, ge=1, le=MAX_COUNT)
    max_age_seconds: StrictInt | None = Field(default=None, ge=1, le=MAX_AGE_SECONDS)

    @model_validator(mode="after")
    def _has_a_limit(self) -> RetentionRule:
        if self.max_count is None and self.max_age_seconds is None:
            raise ValueError("a retention rule needs max_count and/or max_age_seconds")
        return self


class AgentRetention(BaseModel):
    """Every rule of one agent, one per type; `[]` leaves the service's defaults in force."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: list[RetentionRule] = Field(max_length=MAX_RULES)

    @model_validator(mode="after")
    def _one_rule_per_type(self) -> AgentRetention:
        types = [rule.type for rule in self.rules]
        twice = sorted({t for t in types if types.count(t) > 1})
        if twice:
            raise ValueError(f"one rule per type; named more than once: {', '.join(twice)}")
        return self
