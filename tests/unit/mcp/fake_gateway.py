"""A hand-written stand-in for `AsyncEngramClient`: records each call and answers what it was told."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from engram_client import EngramError, models
from engram_mcp.tools import Connect


@dataclass
class FakeGateway:
    """Answers every method with a canned model, or raises `error` when one is set."""

    error: EngramError | None = None
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    @asynccontextmanager
    async def connect(self, key: str) -> AsyncIterator[FakeGateway]:
        self.keys.append(key)
        yield self

    @property
    def connector(self) -> Connect:
        """`connect` typed as the server wants it: the fake answers the client's methods by
        shape, and `AsyncEngramClient` is a class rather than a protocol it could implement."""
        return cast(Connect, self.connect)

    def _called(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.calls.append((name, args, kwargs))
        if self.error is not None:
            raise self.error

    async def create_agent(self, *args: Any, **kwargs: Any) -> models.Agent:
        self._called("create_agent", *args, **kwargs)
        return models.Agent(agent_id="agt_new", name=args[0] if args else None)

    async def list_agents(self, *args: Any, **kwargs: Any) -> list[models.Agent]:
        self._called("list_agents", *args, **kwargs)
        return [models.Agent(agent_id="agt_1", name="support")]

    async def write_memory(self, *args: Any, **kwargs: Any) -> models.MemoryAccepted:
        self._called("write_memory", *args, **kwargs)
        return models.MemoryAccepted(memory_id="mem_1", status_url="/v1/agents/a/memories/mem_1")

    async def recall(self, *args: Any, **kwargs: Any) -> models.Recall:
        self._called("recall", *args, **kwargs)
        return models.Recall(mode=kwargs.get("mode") or "hybrid", floor=0.25)

    async def list_memories(self, *args: Any, **kwargs: Any) -> models.MemoryPage:
        self._called("list_memories", *args, **kwargs)
        return models.MemoryPage(memories=[models.Memory(memory_id="mem_1", status="active")])

    def _edit(self, action: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> models.FactEdit:
        return models.FactEdit(
            status="accepted",
            entity_id=args[0],
            attribute=args[1],
            value=args[2] if len(args) > 2 else kwargs.get("value"),
            action=action,
            key_id="0123456789abcdef",
            reason=kwargs["reason"],
            at=datetime(2026, 12, 5, 14, 0, tzinfo=UTC),
            entity_url=f"/v1/knowledge/entities/{args[0]}",
        )

    async def assert_fact(self, *args: Any, **kwargs: Any) -> models.FactEdit:
        self._called("assert_fact", *args, **kwargs)
        return self._edit("assert", args, kwargs)

    async def withdraw_fact(self, *args: Any, **kwargs: Any) -> models.FactEdit:
        self._called("withdraw_fact", *args, **kwargs)
        return self._edit("withdraw", args, kwargs)

    async def update_memory(self, *args: Any, **kwargs: Any) -> models.MemoryAccepted:
        self._called("update_memory", *args, **kwargs)
        return models.MemoryAccepted(memory_id="mem_2", supersedes=args[1])

    async def memory_history(self, *args: Any, **kwargs: Any) -> models.MemoryHistory:
        self._called("memory_history", *args, **kwargs)
        versions = [
            models.MemoryVersion(memory_id=args[1], status="superseded"),
            models.MemoryVersion(memory_id="mem_2", status="active", edit_reason="typo"),
        ]
        return models.MemoryHistory(memory_id=args[1], versions=versions)

    async def delete_memory(self, *args: Any, **kwargs: Any) -> models.Memory:
        self._called("delete_memory", *args, **kwargs)
        return models.Memory(memory_id=args[1], status="withdrawn")

    async def clear_memories(self, *args: Any, **kwargs: Any) -> models.MemoriesCleared:
        self._called("clear_memories", *args, **kwargs)
        return models.MemoriesCleared(agent_id=args[0], withdrawn=2)

    async def entity_relations(self, *args: Any, **kwargs: Any) -> models.RelationPage:
        self._called("entity_relations", *args, **kwargs)
        relation = models.Relation.model_validate(
            {
                "relation_id": "shipment:sh1:carrier_id:abc",
                "subject_id": "shipment:sh1",
                "predicate": "carried_by",
                "object_id": args[0],
                "direction": "in",
                "from": args[0],
                "to": "shipment:sh1",
            }
        )
        return models.RelationPage(entity_id=args[0], relations=[relation])

    async def find_paths(self, *args: Any, **kwargs: Any) -> models.Paths:
        self._called("find_paths", *args, **kwargs)
        return models.Paths.model_validate({"from": args[0], "to": args[1], "paths": []})

    async def search_knowledge(self, *args: Any, **kwargs: Any) -> models.KnowledgeSearch:
        self._called("search_knowledge", *args, **kwargs)
        passage = models.KnowledgeHit(
            kind="passage",
            score=0.7,
            document_id="doc_1",
            version="v1",
            name="terms.pdf",
            heading_path=["Returns policy"],
            page=2,
            page_end=2,
            span=models.Span(start=10, end=38),
            text="Opened electronics: 14 days.",
        )
        return models.KnowledgeSearch(mode=kwargs.get("mode"), results=[passage])

    async def get_entity(self, *args: Any, **kwargs: Any) -> models.Entity:
        self._called("get_entity", *args, **kwargs)
        return models.Entity(entity_id=args[0], article="# Acme")

    async def list_contradictions(self, *args: Any, **kwargs: Any) -> list[models.Contradiction]:
        self._called("list_contradictions", *args, **kwargs)
        return [models.Contradiction(contradiction_id="ctr_1", status="open")]

    async def upload_document(self, *args: Any, **kwargs: Any) -> models.DocumentAccepted:
        self._called("upload_document", *args, **kwargs)
        return models.DocumentAccepted(document_id="doc_1", version="v1")
