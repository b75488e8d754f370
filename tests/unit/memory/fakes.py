"""Hand-written fakes for the memory service's ports (no mock.patch)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from engram_embedders import Embeddings, HashingEmbedder, Provenance
from engram_events import Envelope
from engram_events.payloads.dlq import DeadLetter
from engram_events.retention import AgentRetention
from engram_memory.adapters.rows import memory_row
from engram_memory.domain.rows import MemoryRow


def _matches(row: Mapping[str, Any], selection: Mapping[str, Any]) -> bool:
    for key, wanted in selection.items():
        options = list(wanted) if isinstance(wanted, list | tuple) else [wanted]
        if row.get(key) not in options:
            return False
    return True


def _read(doc: Mapping[str, Any]) -> MemoryRow:
    """A stored row as the adapter hands it out, sharing nothing with the fake's own copy."""
    return memory_row(copy.deepcopy(doc))


class FakeRows:
    """MemoryRows in a dict; records every selection it was asked to count or select."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.gone_sources: set[tuple[str, str]] = set()
        self.sources: dict[tuple[str, str], set[str]] = {}
        self.counted: list[dict[str, Any]] = []
        self.selected: list[dict[str, Any]] = []
        self.collection = self

    async def get(self, tenant_id: str, memory_id: str) -> MemoryRow | None:
        row = self.rows.get(f"{tenant_id}:{memory_id}")
        return _read(row) if row and row["tenant_id"] == tenant_id else None

    async def get_many(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, MemoryRow]:
        found = {m: await self.get(tenant_id, m) for m in memory_ids}
        return {m: row for m, row in found.items() if row is not None}

    async def open(self, tenant_id: str, fields: dict[str, Any], status: str) -> MemoryRow | None:
        key = f"{tenant_id}:{fields['memory_id']}"
        if key in self.rows:
            return None
        self.rows[key] = {**fields, "_id": key, "tenant_id": tenant_id, "status": status}
        return _read(self.rows[key])

    async def open_many(
        self, tenant_id: str, rows: Sequence[tuple[dict[str, Any], str]]
    ) -> list[MemoryRow | None]:
        return [await self.open(tenant_id, fields, status) for fields, status in rows]

    async def reopen_dead_lettered(
        self, tenant_id: str, rows: Sequence[tuple[dict[str, Any], str]]
    ) -> list[MemoryRow | None]:
        reopened: list[MemoryRow | None] = []
        for fields, status in rows:
            key = f"{tenant_id}:{fields['memory_id']}"
            if "dead_lettered_at" not in self.rows.get(key, {}):
                reopened.append(None)
                continue
            self.rows[key] = {**fields, "_id": key, "tenant_id": tenant_id, "status": status}
            reopened.append(_read(self.rows[key]))
        return reopened

    async def mark_dead_lettered(self, tenant_id: str, fields: Mapping[str, Any]) -> MemoryRow:
        if await self.open(tenant_id, dict(fields), "rejected") is None:
            row = self.rows[f"{tenant_id}:{fields['memory_id']}"]
            if row["status"] == "pending":
                marks = {"reason": fields["reason"], "dead_lettered_at": fields["dead_lettered_at"]}
                await self.set_fields(
                    tenant_id,
                    fields["memory_id"],
                    {**marks, "status": "rejected"},
                    drop_content=True,
                )
        return _read(self.rows[f"{tenant_id}:{fields['memory_id']}"])

    async def set_pending(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        fields: Mapping[str, Any],
        *,
        drop_content: bool = False,
    ) -> set[str]:
        done = set()
        for memory_id in memory_ids:
            row = self.rows.get(f"{tenant_id}:{memory_id}", {})
            named = fields["status"] == "active" and row.get("superseded_by")
            if row.get("status") == "pending" and not named:
                await self.set_fields(tenant_id, memory_id, fields, drop_content=drop_content)
            if row.get("status") == fields["status"]:
                done.add(memory_id)
        return done

    async def supersede(
        self, tenant_id: str, memory_id: str, *, agent_id: str, by: str, held: str
    ) -> bool:
        row = self.rows.get(f"{tenant_id}:{memory_id}", {})
        statuses = [held, "superseded"] if held == "active" else [held]
        if row.get("agent_id") != agent_id or row.get("status") not in statuses:
            return False
        if row.get("superseded_by") not in (None, by):
            return False
        row["superseded_by"] = by
        if held == "active":
            row["status"] = "superseded"
        return True

    async def set_fields(
        self,
        tenant_id: str,
        memory_id: str,
        fields: Mapping[str, Any],
        *,
        drop_content: bool = False,
    ) -> None:
        row = self.rows[f"{tenant_id}:{memory_id}"]
        row.update(fields)
        if drop_content:
            row.pop("content", None)
            row.pop("metadata", None)

    async def set_fields_many(
        self,
        tenant_id: str,
        changes: Sequence[tuple[str, Mapping[str, Any]]],
        *,
        drop_content: bool = False,
    ) -> None:
        for memory_id, fields in changes:
            await self.set_fields(tenant_id, memory_id, fields, drop_content=drop_content)

    async def count(self, selection: Mapping[str, Any]) -> int:
        self.counted.append(dict(selection))
        return sum(1 for row in self.rows.values() if _matches(row, selection))

    async def select(self, selection: Mapping[str, Any], *, limit: int = 0) -> list[MemoryRow]:
        self.selected.append(dict(selection))
        found = [_read(r) for r in self.rows.values() if _matches(r, selection)]
        return sorted(found, key=lambda r: (r.created_at, r.memory_id))

    async def derived_from_any(
        self, tenant_id: str, source_ids: Sequence[str], statuses: Sequence[str]
    ) -> list[MemoryRow]:
        return [
            _read(r)
            for r in self.rows.values()
            if r["tenant_id"] == tenant_id
            and r["status"] in statuses
            and set(r.get("derived_from", [])) & set(source_ids)
        ]

    async def index_sources(self, tenant_id: str, memory_id: str, sources: Sequence[str]) -> None:
        for source in sources:
            self.sources.setdefault((tenant_id, source), set()).add(memory_id)

    async def index_sources_many(
        self, tenant_id: str, named: Sequence[tuple[str, Sequence[str]]]
    ) -> None:
        for memory_id, sources in named:
            await self.index_sources(tenant_id, memory_id, sources)

    async def derived_via_index(
        self, tenant_id: str, source_ids: Sequence[str], statuses: Sequence[str]
    ) -> list[MemoryRow]:
        named = {m for s in source_ids for m in self.sources.get((tenant_id, s), set())}
        return [
            r
            for r in await self.derived_from_any(tenant_id, source_ids, statuses)
            if r.memory_id in named
        ]

    async def mark_gone(self, tenant_id: str, source_ids: Sequence[str]) -> None:
        self.gone_sources.update((tenant_id, s) for s in source_ids)

    async def gone(self, tenant_id: str, source_ids: Sequence[str]) -> set[str]:
        return {s for s in source_ids if (tenant_id, s) in self.gone_sources}


class FakeRules:
    """Each agent's own retention rules in a dict; counts reads (the cache is checked)."""

    def __init__(self) -> None:
        self.rules: dict[tuple[str, str], AgentRetention] = {}
        self.reads = 0

    async def get(self, tenant_id: str, agent_id: str) -> AgentRetention | None:
        self.reads += 1
        return self.rules.get((tenant_id, agent_id))

    async def put(self, tenant_id: str, agent_id: str, retention: AgentRetention) -> None:
        self.rules[(tenant_id, agent_id)] = retention

    async def forget(self, tenant_id: str, agent_id: str) -> None:
        self.rules.pop((tenant_id, agent_id), None)


class FakeSlots:
    """DedupSlots in a dict, with the same claim and hand-over semantics."""

    def __init__(self) -> None:
        self.slots: dict[tuple[str, str], str] = {}

    async def holders(self, tenant_id: str, keys: Sequence[str]) -> dict[str, str]:
        return {k: self.slots[(tenant_id, k)] for k in keys if (tenant_id, k) in self.slots}

    async def claim(
        self, tenant_id: str, claims: Sequence[tuple[str, str]]
    ) -> tuple[dict[str, str], set[str]]:
        won = {key for key, _ in claims if (tenant_id, key) not in self.slots}
        return {key: self.slots.setdefault((tenant_id, key), m) for key, m in claims}, won

    async def hand_over(self, tenant_id: str, key: str, holder: str, memory_id: str) -> str:
        if self.slots.get((tenant_id, key)) == holder:
            self.slots[(tenant_id, key)] = memory_id
        return self.slots.get((tenant_id, key), memory_id)


class CountingEmbedder:
    """A real hashing embedder that counts calls and texts, and reports its own provenance."""

    def __init__(self, model_id: str = "counting-hashing") -> None:
        self.inner = HashingEmbedder(dimension=32)
        self.calls = 0
        self.texts: list[str] = []
        self.queries: list[str] = []
        base = self.inner.provenance
        self._provenance = Provenance(
            provider="fake-provider",
            model_id=model_id,
            weights_sha256="ab" * 32,
            dimension=base.dimension,
            normalized=True,
            precision="fp16",
        )

    @property
    def provenance(self) -> Provenance:
        return self._provenance

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        self.calls += 1
        self.texts += list(texts)
        vectors = (await self.inner.embed(texts)).vectors
        return Embeddings(np.asarray(vectors, dtype=np.float32), self._provenance)

    async def embed_queries(self, texts: Sequence[str]) -> Embeddings:
        self.queries += list(texts)
        return await self.embed(texts)

    async def aclose(self) -> None:
        return None


def now() -> datetime:
    return datetime.now(UTC)


def refused_write(event: Envelope[Any]) -> DeadLetter:
    """The letter the consumer sends for an input whose write the database refused."""
    return DeadLetter(
        consumer="memory",
        topic="engram.memories.v1",
        partition=0,
        offset=3,
        event_id=str(event.event_id),
        error_type="BulkWriteError",
        error="batch op errors occurred",
        reason="BulkWriteError: write error codes 2",
        attempts=1,
        value_base64="",
        failed_at=datetime(2026, 1, 2, tzinfo=UTC),
    )
