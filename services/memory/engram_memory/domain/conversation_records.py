"""A conversation's record as the service reads it: its messages, the facts a model proposed and
every decision, typed; mapped from storage in `adapters/conversations.py`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

Action = Literal["add", "supersede", "skip"]
"""A fact's decision: a new memory, one replacing the memory it names, or none (already known)."""


@dataclass(frozen=True, slots=True)
class MessageEntry:
    """One message as the record keeps it; `memory_id` names the memory it becomes, if any."""

    index: int
    role: str
    chars: int
    content_sha256: str | None = None
    content: str | None = None
    name: str | None = None
    at: datetime | None = None
    memory_id: str | None = None


@dataclass(frozen=True, slots=True)
class FactDecision:
    """What was chosen for one fact, by whom (the model, or none asked) and from what: the
    memories shown, the model the endpoint reported and a hash of its output."""

    action: Action
    asked: bool
    candidates: tuple[str, ...]
    model: str
    output_sha256: str
    supersedes: str | None = None
    known_as: str | None = None


@dataclass(frozen=True, slots=True)
class FactEntry:
    """One fact a model proposed and, once decided, its decision."""

    index: int
    content_sha256: str
    memory_id: str
    content: str | None = None
    decision: FactDecision | None = None

    @property
    def written(self) -> bool:
        """Whether the fact writes its memory: decided `add` or `supersede`."""
        return self.decision is not None and self.decision.action != "skip"


@dataclass(frozen=True, slots=True)
class Extraction:
    """The model call that proposed the facts: the model the endpoint reported, its output's hash."""

    model: str
    output_sha256: str


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    """One conversation of one tenant: ids, scope, mode and status, what it holds and, once
    failed or deleted, why and when."""

    tenant_id: str
    conversation_id: str
    agent_id: str
    status: str
    mode: str | None = None
    messages: tuple[MessageEntry, ...] = ()
    facts: tuple[FactEntry, ...] | None = None
    user_id: str | None = None
    session_id: str | None = None
    idempotency_key: str | None = None
    metadata: Mapping[str, Any] | None = None
    model_calls: int = 0
    extraction: Extraction | None = None
    error: str | None = None
    attempts: int = 0
    dead_lettered_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    deleted_at: datetime | None = None

    def without_texts(self) -> ConversationRecord:
        """What a deletion keeps: ids, roles, hashes and decisions; no content or metadata."""
        return dataclasses.replace(
            self,
            messages=tuple(dataclasses.replace(m, content=None) for m in self.messages),
            facts=None
            if self.facts is None
            else tuple(dataclasses.replace(f, content=None) for f in self.facts),
            metadata={},
        )

    def memory_ids(self) -> list[str]:
        """Every memory the conversation asked for (messages without a model, else the facts
        decided `add` or `supersede`)."""
        if self.mode == "model":
            return [f.memory_id for f in self.facts or () if f.written]
        return [m.memory_id for m in self.messages if m.memory_id]
