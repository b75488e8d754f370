"""Hand-written fakes behind extraction's ports: the record store, the outbox, the model."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from engram_events import Envelope, new_event
from engram_events.catalog import DOCUMENT_INGESTED
from engram_events.payloads.documents import DocumentIngested
from engram_extraction.adapters.mapping import pairs, record_head
from engram_extraction.domain.heads import RecordHead
from engram_extraction.domain.records import Rejection, Source
from engram_extraction.domain.revisions import Change, Entry
from engram_extraction.domain.tombstones import Marker
from engram_extraction.domain.types import TypeVersion

CANARY = "canary-7f3e-secret-content"


class FakeStore:
    """The RecordStore surface the handlers use, in memory; `fail_writes` simulates an outage,
    `refuse` a write the database refuses every time."""

    def __init__(self) -> None:
        self.manifests: dict[str, dict[str, Entry]] = {}
        self.heads: dict[str, dict[str, Any]] = {}
        self.rejected: list[Rejection] = []
        self.attempts: dict[str, int] = {}
        self.imports: dict[str, dict[str, Any]] = {}
        self.fail_writes = False
        self.refuse: BaseException | None = None

    def revisions(self) -> dict[str, int]:
        return {rid: head["revision"] for rid, head in self.heads.items()}

    async def manifest(self, tenant_id: str, source_item: str) -> dict[str, Entry]:
        return dict(self.manifests.get(f"{tenant_id}:{source_item}", {}))

    async def save_manifest(
        self, tenant_id: str, source_item: str, entries: dict[str, Entry], at: datetime
    ) -> None:
        self.manifests[f"{tenant_id}:{source_item}"] = dict(entries)

    async def write(
        self,
        tenant_id: str,
        source: Source,
        created: list[Change],
        revised: list[Change],
        at: datetime,
    ) -> None:
        if self.fail_writes:
            raise ConnectionError(f"database unavailable while writing {CANARY}")
        if self.refuse is not None:
            raise self.refuse
        for change in [*created, *revised]:
            draft = change.draft
            self.heads[draft.record_id] = {
                "tenant_id": tenant_id,
                "record_id": draft.record_id,
                "entity_id": draft.entity_id,
                "document_id": source.document_id,
                "status": "active",
                "revision": change.revision,
                "content_sha256": draft.content_sha256,
                "attributes": pairs(draft.attributes),
                "lineage": {"locator": draft.locator, "model": source.model},
            }

    async def keep_rejected(
        self, tenant_id: str, source: Source, cause: str, rejected: list[Rejection], at: datetime
    ) -> None:
        self.rejected.extend(rejected)

    async def heads_by_id(self, tenant_id: str, record_ids: Sequence[str]) -> list[RecordHead]:
        return [record_head(self.heads[rid]) for rid in record_ids if rid in self.heads]

    async def replace_with_markers(
        self, tenant_id: str, heads: list[RecordHead], marker: Marker
    ) -> None:
        for head in heads:
            stored = self.heads[head.record_id]
            kept = {k: v for k, v in stored.items() if k != "attributes"}
            marks = dataclasses.asdict(marker)
            self.heads[head.record_id] = {**kept, "status": "tombstoned", **marks}

    async def count_attempt(self, tenant_id: str, key: str) -> int:
        self.attempts[key] = self.attempts.get(key, 0) + 1
        return self.attempts[key]

    async def failed_attempts(self, tenant_id: str, key: str) -> int:
        return self.attempts.get(key, 0)

    async def save_import(self, tenant_id: str, import_id: str, **fields: Any) -> None:
        self.imports[import_id] = fields


class FakePassages:
    """The PassageStore surface, in memory: rows by passage id, each document's current version."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.heads: dict[str, str] = {}
        self.writes = 0

    async def write_passages(
        self,
        tenant_id: str,
        document_id: str,
        version: str,
        rows: Sequence[dict[str, Any]],
        at: datetime,
    ) -> None:
        self.writes += 1
        for row in rows:
            self.rows[f"{tenant_id}:{row['passage_id']}"] = dict(row)
        self.heads[f"{tenant_id}:{document_id}"] = version

    async def document_passages(self, tenant_id: str, document_id: str) -> list[dict[str, Any]]:
        return [
            dict(row)
            for key, row in self.rows.items()
            if key.startswith(f"{tenant_id}:") and row["document_id"] == document_id
        ]

    async def withdraw_passages(
        self, tenant_id: str, passage_ids: Sequence[str], cause: str, at: datetime
    ) -> None:
        for pid in passage_ids:
            row = self.rows[f"{tenant_id}:{pid}"]
            row.update(status="withdrawn", withdrawn_by=cause)
            row.pop("text", None)

    async def drop_head(self, tenant_id: str, document_id: str) -> None:
        self.heads.pop(f"{tenant_id}:{document_id}", None)

    def live(self) -> list[str]:
        return sorted(r["passage_id"] for r in self.rows.values() if r.get("status") is None)


class FakeOutbox:
    """Collects what would be staged: envelopes and raw entries (Kafka tombstones)."""

    def __init__(self) -> None:
        self.staged: list[Envelope[Any]] = []
        self.raw: dict[str, dict[str, Any]] = {}

    async def stage(self, envelopes: list[Envelope[Any]]) -> int:
        self.staged.extend(envelopes)
        return len(envelopes)

    def entries(self, envelopes: list[Envelope[Any]]) -> list[dict[str, Any]]:
        return [{"_id": str(e.event_id), "envelope": e} for e in envelopes]

    def tombstone_entry(self, base_topic: str, key: str, entry_id: str) -> dict[str, Any]:
        return {"_id": entry_id, "topic": base_topic, "key": key, "value": None}

    async def stage_entries(self, docs: list[dict[str, Any]]) -> int:
        """Entries by id, as the outbox keeps them: staging one again changes nothing."""
        new = [doc for doc in docs if doc["_id"] not in self.raw]
        for doc in new:
            self.raw[doc["_id"]] = doc
            if "envelope" in doc:
                self.staged.append(doc["envelope"])
        return len(new)


def ingested(content: bytes, name: str = "carriers.csv", mime: str = "text/csv") -> Envelope[Any]:
    """A `document.ingested` for document `doc_1`, versioned by its content hash."""
    sha = hashlib.sha256(content).hexdigest()
    payload = DocumentIngested(
        document_id="doc_1",
        version=sha[:16],
        source="gateway",
        source_item_id=name,
        name=name,
        mime=mime,
        content_sha256=sha,
        size_bytes=len(content),
        content_base64=base64.b64encode(content).decode(),
    )
    return new_event(DOCUMENT_INGESTED, payload, tenant_id="tnt_a")


class FakeTypeStore:
    """The `TypeStorage` port in memory: heads by (tenant, type), every version kept."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], list[TypeVersion]] = {}
        self.reads = 0

    async def heads(self, tenant_id: str) -> list[TypeVersion]:
        self.reads += 1
        return [rows[-1] for (t, _), rows in sorted(self.rows.items()) if t == tenant_id]

    async def head(self, tenant_id: str, name: str) -> TypeVersion | None:
        rows = self.rows.get((tenant_id, name))
        return rows[-1] if rows else None

    async def version(self, tenant_id: str, name: str, version: int) -> TypeVersion | None:
        rows = self.rows.get((tenant_id, name), [])
        return next((r for r in rows if r.version == version), None)

    async def versions(self, tenant_id: str, name: str) -> list[TypeVersion]:
        return list(self.rows.get((tenant_id, name), []))

    async def change(self, tenant_id: str, row: TypeVersion) -> bool:
        rows = self.rows.setdefault((tenant_id, row.name), [])
        if (rows[-1].version if rows else 0) != row.version - 1:
            return False
        rows.append(row)
        return True
