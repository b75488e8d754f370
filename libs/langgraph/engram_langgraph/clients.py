"""The part of Engram's client the store uses, so a hand-written fake can stand in for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from engram_client import models


class SyncClient(Protocol):
    """The blocking calls the store makes (`EngramClient` has them all)."""

    def write_memory(
        self,
        agent_id: str,
        content: str,
        *,
        type: str = ...,
        metadata: Mapping[str, Any] | None = ...,
        user_id: str | None = ...,
        session_id: str | None = ...,
        allow_duplicate: bool = ...,
    ) -> models.MemoryAccepted: ...

    def wait_for_memory(
        self, agent_id: str, memory_id: str, timeout: float = ..., *, interval: float = ...
    ) -> models.Memory: ...

    def list_memories(
        self,
        agent_id: str | None = ...,
        *,
        status: str | None = ...,
        filter: Mapping[str, Any] | None = ...,
        cursor: str | None = ...,
        limit: int | None = ...,
        order: str | None = ...,
    ) -> models.MemoryPage: ...

    def delete_memory(self, agent_id: str, memory_id: str) -> models.Memory: ...

    def recall(
        self,
        agent_id: str,
        query: str,
        *,
        top_k: int = ...,
        min_score: float | None = ...,
        mode: str | None = ...,
        filter: Mapping[str, Any] | None = ...,
    ) -> models.Recall: ...


class AsyncClient(Protocol):
    """The same calls, awaited (`AsyncEngramClient` has them all)."""

    async def write_memory(
        self,
        agent_id: str,
        content: str,
        *,
        type: str = ...,
        metadata: Mapping[str, Any] | None = ...,
        user_id: str | None = ...,
        session_id: str | None = ...,
        allow_duplicate: bool = ...,
    ) -> models.MemoryAccepted: ...

    async def wait_for_memory(
        self,
        agent_id: str,
        memory_id: str,
        timeout: float = ...,  # noqa: ASYNC109 - the client's own surface
        *,
        interval: float = ...,
    ) -> models.Memory: ...

    async def list_memories(
        self,
        agent_id: str | None = ...,
        *,
        status: str | None = ...,
        filter: Mapping[str, Any] | None = ...,
        cursor: str | None = ...,
        limit: int | None = ...,
        order: str | None = ...,
    ) -> models.MemoryPage: ...

    async def delete_memory(self, agent_id: str, memory_id: str) -> models.Memory: ...

    async def recall(
        self,
        agent_id: str,
        query: str,
        *,
        top_k: int = ...,
        min_score: float | None = ...,
        mode: str | None = ...,
        filter: Mapping[str, Any] | None = ...,
    ) -> models.Recall: ...
