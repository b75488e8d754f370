"""What the memory service's use cases need from the outside world; `adapters/` implements it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from engram_events import Envelope
from engram_events.retention import AgentRetention
from engram_memory.domain.conversation_records import ConversationRecord, Extraction, FactEntry
from engram_memory.domain.listing import Order, Position
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.selection import Selection
from engram_platform.audit import AuditEntry, AuditQuery
from engram_vectors import HybridHit, Point, SparseVector


class MemoryRowStore(Protocol):
    """The memory rows as the handlers use them, keyed by tenant and memory id
    (`adapters.rows.MemoryRows`)."""

    async def get(self, tenant_id: str, memory_id: str) -> MemoryRow | None: ...

    async def get_many(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, MemoryRow]: ...

    async def set_fields(
        self,
        tenant_id: str,
        memory_id: str,
        fields: Mapping[str, Any],
        *,
        drop_content: bool = False,
    ) -> None: ...

    async def set_fields_many(
        self,
        tenant_id: str,
        changes: Sequence[tuple[str, Mapping[str, Any]]],
        *,
        drop_content: bool = False,
    ) -> None: ...

    async def set_pending(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        fields: Mapping[str, Any],
        *,
        drop_content: bool = False,
    ) -> set[str]: ...

    async def supersede(
        self, tenant_id: str, memory_id: str, *, agent_id: str, by: str, held: str
    ) -> bool: ...

    async def open_many(
        self, tenant_id: str, rows: Sequence[tuple[dict[str, Any], str]]
    ) -> list[MemoryRow | None]: ...

    async def mark_dead_lettered(self, tenant_id: str, fields: Mapping[str, Any]) -> MemoryRow: ...

    async def reopen_dead_lettered(
        self, tenant_id: str, rows: Sequence[tuple[dict[str, Any], str]]
    ) -> list[MemoryRow | None]: ...

    async def count(self, selection: Mapping[str, Any]) -> int: ...

    async def select(self, selection: Mapping[str, Any], *, limit: int = 0) -> list[MemoryRow]: ...

    async def index_sources_many(
        self, tenant_id: str, named: Sequence[tuple[str, Sequence[str]]]
    ) -> None: ...

    async def derived_via_index(
        self, tenant_id: str, source_ids: Sequence[str], statuses: Sequence[str]
    ) -> list[MemoryRow]: ...

    async def mark_gone(self, tenant_id: str, source_ids: Sequence[str]) -> None: ...

    async def gone(self, tenant_id: str, source_ids: Sequence[str]) -> set[str]: ...


class MemoryRowReads(MemoryRowStore, Protocol):
    """The rows as the API reads them too: pages, tallies, scopes and lineage."""

    async def owners(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, str]: ...

    async def page(
        self, selection: Selection, order: Order, after: Position | None, limit: int
    ) -> list[MemoryRow]: ...

    async def tally(self, selection: Selection) -> tuple[int, dict[str, int], dict[str, int]]: ...

    async def select_by(self, selection: Selection) -> list[MemoryRow]: ...

    async def derived_from_any(
        self, tenant_id: str, source_ids: Sequence[str], statuses: Sequence[str]
    ) -> list[MemoryRow]: ...

    async def count_derived_from(
        self, tenant_id: str, sources: Mapping[str, Sequence[str]], statuses: Sequence[str]
    ) -> dict[str, int]: ...


class MemoryVersions(Protocol):
    """The rows a memory's history reads: by id, and the newer versions naming one."""

    async def get(self, tenant_id: str, memory_id: str) -> MemoryRow | None: ...

    async def successors(
        self, tenant_id: str, agent_id: str, memory_id: str, since: datetime
    ) -> list[MemoryRow]: ...


class StagedWithdrawals(Protocol):
    """Rows stripped with their `memory.withdrawn` staged in the same write, for callers that
    are not consumer handlers (`adapters.staging.OutboxWithdrawals`)."""

    async def withdraw(
        self,
        tenant_id: str,
        changes: Sequence[tuple[str, Mapping[str, Any], Envelope[Any]]],
        *,
        keep_content: bool = False,
    ) -> None: ...


class RetentionRuleStore(Protocol):
    """Each agent's own retention rules (`adapters.retention.RetentionRules`)."""

    async def get(self, tenant_id: str, agent_id: str) -> AgentRetention | None: ...

    async def put(self, tenant_id: str, agent_id: str, retention: AgentRetention) -> None: ...

    async def forget(self, tenant_id: str, agent_id: str) -> None: ...


class AuditRecorder(Protocol):
    """The service's audit entries (`engram_platform.audit.AuditLog`)."""

    async def record(self, entries: Sequence[AuditEntry]) -> None: ...


class AuditPages(Protocol):
    """The service's audit entries as the gateway lists them (`engram_platform.audit.AuditLog`)."""

    async def page(self, tenant_id: str, query: AuditQuery) -> list[AuditEntry]: ...


class LapsedRows(Protocol):
    """The rows the expiry sweeper walks: live ones of any tenant past `expires_at`."""

    async def lapsed(self, now: datetime, limit: int) -> list[MemoryRow]: ...


class MemoryPoints(Protocol):
    """The vector collection of stored memories (`adapters.vectors.MemoryVectors`)."""

    @property
    def lexical(self) -> str | None:
        """The lexical encoder the collection keeps sparse vectors with, or None (dense only)."""
        ...

    async def fingerprint(self) -> str: ...

    async def put_many(
        self,
        entries: Sequence[tuple[MemoryRow, Sequence[float], str]],
        provenance: Mapping[str, Any],
    ) -> Mapping[str, Any]:
        """Write the points; returns the provenance they were stored with."""
        ...

    async def set_status(
        self, tenant_id: str, memory_id: str, status: str, *, superseded_by: str | None = None
    ) -> None: ...

    async def remove(self, tenant_id: str, memory_ids: Sequence[str]) -> None: ...

    async def candidates(
        self,
        selection: Selection,
        vector: Sequence[float],
        sparse: SparseVector | None,
        limit: int,
        *,
        fingerprint: str,
        with_payload: bool = True,
    ) -> list[HybridHit]: ...

    async def hit_payloads(self, hits: Sequence[HybridHit]) -> dict[str, HybridHit]: ...


class MovablePoints(MemoryPoints, Protocol):
    """A collection a reindex fills and verifies (`adapters.vectors.MemoryVectors`)."""

    @property
    def collection(self) -> str: ...

    async def total(self) -> int: ...

    async def points(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, Point]: ...


class ReindexRows(Protocol):
    """Every tenant's live memory rows in key order, as a reindex walks them
    (`adapters.reindex.ReindexStore`)."""

    def key(self, row: MemoryRow) -> str:
        """Where a walk resumes after this row."""
        ...

    async def page(self, after: str | None, limit: int) -> list[MemoryRow]: ...

    async def stored_between(
        self, since: datetime, until: datetime, after: str | None, limit: int
    ) -> list[MemoryRow]: ...

    async def by_keys(self, keys: Sequence[str]) -> dict[str, MemoryRow]: ...

    async def count_live(self) -> int: ...


class DedupSlotStore(Protocol):
    """Which memory holds each (agent, scope, content) slot (`adapters.dedup.DedupSlots`)."""

    async def holders(self, tenant_id: str, keys: Sequence[str]) -> dict[str, str]: ...

    async def claim(
        self, tenant_id: str, claims: Sequence[tuple[str, str]]
    ) -> tuple[dict[str, str], set[str]]: ...

    async def hand_over(self, tenant_id: str, key: str, holder: str, memory_id: str) -> str: ...


class ConversationRecords(Protocol):
    """Conversation records (`adapters.conversations.ConversationStore`)."""

    async def get(self, tenant_id: str, conversation_id: str) -> ConversationRecord | None: ...

    async def owners(self, tenant_id: str, conversation_ids: Sequence[str]) -> dict[str, str]: ...

    async def open(self, record: ConversationRecord) -> ConversationRecord: ...

    async def save_facts(
        self,
        tenant_id: str,
        conversation_id: str,
        facts: Sequence[FactEntry],
        model_calls: int,
        *,
        extraction: Extraction | None = None,
    ) -> None: ...

    async def settle(
        self, tenant_id: str, conversation_id: str, status: str, error: str | None = None
    ) -> None: ...

    async def count_attempt(self, tenant_id: str, conversation_id: str) -> int: ...

    async def mark_failed(self, record: ConversationRecord, reason: str) -> ConversationRecord: ...

    async def mark_deleted(
        self,
        tenant_id: str,
        agent_id: str,
        conversation_id: str,
        kept: ConversationRecord | None,
    ) -> None: ...
