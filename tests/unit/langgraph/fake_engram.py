"""A hand-written in-memory Engram with the client calls the store makes, sync and async.

It keeps memories the way the gateway reports them (pending until waited for, then active;
withdrawn when deleted), applies the listing and recall filter (scope, metadata `eq`, `in`,
`gte`, `lte`, `exists`), ranks recall by the share of query words a memory's content holds,
and records every call so tests can check what the store asked.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from engram_client import NotFound, models

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _condition_holds(value: Any, condition: Any) -> bool:
    if not isinstance(condition, Mapping):
        return value is not None and type(value) is type(condition) and value == condition
    if "exists" in condition:
        return (value is not None) == condition["exists"]
    if value is None:
        return False
    if "eq" in condition:
        return _condition_holds(value, condition["eq"])
    if "in" in condition:
        return value in condition["in"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    low, high = condition.get("gte"), condition.get("lte")
    return (low is None or value >= low) and (high is None or value <= high)


def filter_holds(memory: models.Memory, filter: Mapping[str, Any] | None) -> bool:
    """Whether a memory meets a recall/listing filter as the gateway documents it."""
    wanted = filter or {}
    for scope in ("user_id", "session_id", "type"):
        if scope in wanted and getattr(memory, scope) != wanted[scope]:
            return False
    metadata = memory.metadata or {}
    return all(
        _condition_holds(metadata.get(key), condition)
        for key, condition in (wanted.get("metadata") or {}).items()
    )


@dataclass
class FakeEngram:
    """The memories of one tenant, its agents, and the calls made so far."""

    agents: set[str] = field(default_factory=lambda: {"agt_a", "agt_b"})
    memories: dict[str, models.Memory] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    reject_next: bool = False
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def _agent(self, agent_id: str) -> None:
        if agent_id not in self.agents:
            raise NotFound(f"agent {agent_id} not found", status=404, type="/problems/not-found")

    def write_memory(
        self,
        agent_id: str,
        content: str,
        *,
        type: str = "conversation",
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        allow_duplicate: bool = False,
    ) -> models.MemoryAccepted:
        self.calls.append(
            (
                "write_memory",
                {
                    "agent_id": agent_id,
                    "content": content,
                    "type": type,
                    "metadata": dict(metadata or {}),
                    "user_id": user_id,
                    "session_id": session_id,
                    "allow_duplicate": allow_duplicate,
                },
            )
        )
        self._agent(agent_id)
        n = next(self._ids)
        memory_id = f"mem_{n:04d}"
        self.memories[memory_id] = models.Memory(
            memory_id=memory_id,
            agent_id=agent_id,
            user_id=user_id,
            session_id=session_id,
            status="pending",
            type=type,
            content=content,
            metadata=dict(metadata or {}),
            created_at=EPOCH + timedelta(seconds=n),
        )
        return models.MemoryAccepted(memory_id=memory_id)

    def wait_for_memory(
        self, agent_id: str, memory_id: str, timeout: float = 60.0, *, interval: float = 0.5
    ) -> models.Memory:
        self.calls.append(("wait_for_memory", {"memory_id": memory_id, "timeout": timeout}))
        memory = self.memories[memory_id]
        if memory.status == "pending":
            memory.status = "rejected" if self.reject_next else "active"
            memory.reason = "invalid" if self.reject_next else None
        return memory

    def list_memories(
        self,
        agent_id: str | None = None,
        *,
        status: str | None = None,
        filter: Mapping[str, Any] | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        order: str | None = None,
    ) -> models.MemoryPage:
        self.calls.append(
            ("list_memories", {"agent_id": agent_id, "filter": filter, "status": status})
        )
        if agent_id is not None:
            self._agent(agent_id)
        found = [
            m
            for m in self.memories.values()
            if (agent_id is None or m.agent_id == agent_id)
            and (status is None or m.status == status)
            and filter_holds(m, filter)
        ]
        found.sort(key=lambda m: (m.created_at, m.memory_id), reverse=order == "recent")
        start, size = int(cursor or 0), limit or 100
        page = found[start : start + size]
        more = start + size < len(found)
        return models.MemoryPage(memories=page, next_cursor=str(start + size) if more else None)

    def delete_memory(self, agent_id: str, memory_id: str) -> models.Memory:
        self.calls.append(("delete_memory", {"agent_id": agent_id, "memory_id": memory_id}))
        memory = self.memories.get(memory_id)
        if memory is None or memory.agent_id != agent_id:
            raise NotFound(f"memory {memory_id} not found", status=404, type="/problems/not-found")
        memory.status = "withdrawn"
        return memory

    def recall(
        self,
        agent_id: str,
        query: str,
        *,
        top_k: int = 5,
        min_score: float | None = None,
        mode: str | None = None,
        filter: Mapping[str, Any] | None = None,
    ) -> models.Recall:
        self.calls.append(
            (
                "recall",
                {
                    "agent_id": agent_id,
                    "query": query,
                    "top_k": top_k,
                    "min_score": min_score,
                    "mode": mode,
                    "filter": filter,
                },
            )
        )
        self._agent(agent_id)
        asked = _words(query)
        hits = []
        for memory in self.memories.values():
            if memory.agent_id != agent_id or memory.status != "active":
                continue
            if not filter_holds(memory, filter):
                continue
            score = len(asked & _words(memory.content or "")) / max(1, len(asked))
            if min_score is not None and score < min_score:
                continue
            hits.append(
                models.RecallHit(
                    memory_id=memory.memory_id,
                    content=memory.content,
                    score=score,
                    scores=models.RecallScores(dense=score, fused=score),
                    metadata=memory.metadata,
                    user_id=memory.user_id,
                    session_id=memory.session_id,
                    created_at=memory.created_at,
                )
            )
        hits.sort(key=lambda h: (-h.scores.fused, h.memory_id))
        return models.Recall(results=hits[:top_k], mode=mode or "hybrid")

    def called(self, name: str) -> list[dict[str, Any]]:
        """The arguments of every call of one method, in order."""
        return [args for called, args in self.calls if called == name]


class AsyncFakeEngram:
    """The same fake behind awaited methods (sharing one FakeEngram's state)."""

    def __init__(self, engram: FakeEngram) -> None:
        self.engram = engram

    async def write_memory(
        self, agent_id: str, content: str, **kwargs: Any
    ) -> models.MemoryAccepted:
        return self.engram.write_memory(agent_id, content, **kwargs)

    async def wait_for_memory(
        self, agent_id: str, memory_id: str, timeout: float = 60.0, *, interval: float = 0.5
    ) -> models.Memory:
        return self.engram.wait_for_memory(agent_id, memory_id, timeout, interval=interval)

    async def list_memories(self, agent_id: str | None = None, **kwargs: Any) -> models.MemoryPage:
        return self.engram.list_memories(agent_id, **kwargs)

    async def delete_memory(self, agent_id: str, memory_id: str) -> models.Memory:
        return self.engram.delete_memory(agent_id, memory_id)

    async def recall(self, agent_id: str, query: str, **kwargs: Any) -> models.Recall:
        return self.engram.recall(agent_id, query, **kwargs)
