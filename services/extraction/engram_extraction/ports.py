"""What extraction's use cases and routes need from storage and the outbox, implemented by
`adapters` (the database) and the platform's outbox."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from engram_events import Envelope
from engram_events.payloads.prune import PruneSelector
from engram_extraction.domain.heads import RecordHead
from engram_extraction.domain.records import Rejection, Source
from engram_extraction.domain.revisions import Change, Entry
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.domain.tombstones import Marker
from engram_extraction.domain.types import TypeVersion


class RecordWrites(Protocol):
    """Manifests, record heads and history, rejects, attempts and imports, as use cases write them."""

    async def manifest(self, tenant_id: str, source_item: str) -> dict[str, Entry]: ...

    async def save_manifest(
        self, tenant_id: str, source_item: str, entries: dict[str, Entry], at: datetime
    ) -> None: ...

    async def write(
        self,
        tenant_id: str,
        source: Source,
        created: list[Change],
        revised: list[Change],
        at: datetime,
    ) -> None: ...

    async def keep_rejected(
        self, tenant_id: str, source: Source, cause: str, rejected: list[Rejection], at: datetime
    ) -> None: ...

    async def heads_by_id(self, tenant_id: str, record_ids: Sequence[str]) -> list[RecordHead]: ...

    async def replace_with_markers(
        self, tenant_id: str, heads: list[RecordHead], marker: Marker
    ) -> None: ...

    async def count_attempt(self, tenant_id: str, key: str) -> int: ...

    async def failed_attempts(self, tenant_id: str, key: str) -> int: ...

    async def save_import(self, tenant_id: str, import_id: str, **fields: Any) -> None: ...


class RecordReads(Protocol):
    """Records, imports and a prune's leftovers, as the internal API reads them."""

    async def record(self, tenant_id: str, record_id: str) -> RecordHead | None: ...

    async def list_records(
        self,
        tenant_id: str,
        *,
        filters: dict[str, str],
        after: tuple[datetime, str] | None,
        limit: int,
    ) -> list[RecordHead]: ...

    async def import_status(self, tenant_id: str, import_id: str) -> dict[str, Any] | None: ...

    async def live_among(self, tenant_id: str, record_ids: Sequence[str]) -> int: ...

    async def known(self, tenant_id: str, record_ids: Sequence[str]) -> set[str]: ...


class TombstoneWrites(Protocol):
    """Selecting record heads and replacing them with markers, for prunes and deletions."""

    async def heads_by_id(self, tenant_id: str, record_ids: Sequence[str]) -> list[RecordHead]: ...

    async def selected_heads(
        self, tenant_id: str, selector: PruneSelector, now: datetime
    ) -> list[RecordHead]: ...

    async def job_markers(self, tenant_id: str, prune_job_id: str) -> list[RecordHead]: ...

    async def document_record_ids(self, tenant_id: str, document_id: str) -> list[str]: ...

    async def tombstone(self, tenant_id: str, heads: list[RecordHead], marker: Marker) -> None: ...


class PassageWrites(Protocol):
    """A document version's passage rows, and which version is the document's current one."""

    async def write_passages(
        self,
        tenant_id: str,
        document_id: str,
        version: str,
        rows: Sequence[dict[str, Any]],
        at: datetime,
    ) -> None: ...

    async def document_passages(self, tenant_id: str, document_id: str) -> list[dict[str, Any]]: ...

    async def withdraw_passages(
        self, tenant_id: str, passage_ids: Sequence[str], cause: str, at: datetime
    ) -> None: ...

    async def drop_head(self, tenant_id: str, document_id: str) -> None: ...


class PassageReads(Protocol):
    """A document's current passages in order, and what a prune left live."""

    async def current_passages(
        self, tenant_id: str, document_id: str, after: int, limit: int
    ) -> tuple[str, list[dict[str, Any]]] | None: ...

    async def live_passages_of(self, tenant_id: str, document_ids: Sequence[str]) -> int: ...


class Outbox(Protocol):
    """Where events and Kafka tombstones are staged, to be published once durable."""

    def entries(self, envelopes: list[Envelope[Any]]) -> list[dict[str, Any]]: ...

    def tombstone_entry(self, base_topic: str, key: str, entry_id: str) -> dict[str, Any]: ...

    async def stage(self, envelopes: list[Envelope[Any]]) -> int: ...

    async def stage_entries(self, docs: list[dict[str, Any]]) -> int: ...


class TypeStorage(Protocol):
    """A tenant's record type declarations: current heads and every version."""

    async def heads(self, tenant_id: str) -> list[TypeVersion]: ...

    async def head(self, tenant_id: str, name: str) -> TypeVersion | None: ...

    async def version(self, tenant_id: str, name: str, version: int) -> TypeVersion | None: ...

    async def versions(self, tenant_id: str, name: str) -> list[TypeVersion]: ...

    async def change(self, tenant_id: str, row: TypeVersion) -> bool: ...


class TypeResolver(Protocol):
    """The record types a tenant's sources are extracted with now (`service.types`)."""

    async def registry_for(self, tenant_id: str) -> SchemaRegistry: ...


async def registry_for(types: SchemaRegistry | TypeResolver, tenant_id: str) -> SchemaRegistry:
    """The tenant's registry; a bare registry (tests, tools) is every tenant's."""
    if isinstance(types, SchemaRegistry):
        return types
    return await types.registry_for(tenant_id)
