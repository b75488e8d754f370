"""Importing an export into the caller's tenant: the whole file is checked first (version,
every line, the checksum), then agents are created, rules set and memories written through the
write path under ids derived from the source, so a second run writes nothing twice. Records are
restored as they were (`records.restore_requested`, one source item's records a batch, ids
derived by extraction from the target and the source record) and a curator's records by
publishing the same edit again (`fact.edit_requested` with its key, action, reason and time);
every event id derives from the source, so a second run or a cut run's finish adds nothing."""

from __future__ import annotations

import json
import tempfile
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any

from pydantic import ValidationError

from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import (
    FACT_EDIT_REQUESTED,
    MEMORY_BULK_WRITE_REQUESTED,
    RECORDS_RESTORE_REQUESTED,
)
from engram_events.content import ContentLimits
from engram_events.payloads.embeddings import VectorProvenance
from engram_events.payloads.memories import Author, MemoryWrite, MemoryWriteRequested
from engram_events.payloads.records import RecordsRestoreRequested, RestoredRecord
from engram_events.retention import AgentRetention
from engram_gateway.domain import export_format, transfer
from engram_gateway.domain.edits import author_of
from engram_gateway.domain.export_format import ExportRefused
from engram_gateway.domain.model import Caller
from engram_gateway.ports import AgentDirectory, EventSink, OwningServices
from engram_gateway.service.audit import AuditTrail
from engram_gateway.service.intake import publish_or_503
from engram_gateway.service.memory_writes import MemoryWrites
from engram_gateway.service.tenant_export import TYPES_PATH
from engram_platform.internal import KNOWN_PATH
from engram_platform.problems import Problem

SPOOL_IN_MEMORY = 8 * 1024 * 1024
"""A file up to this size is checked in memory; a larger one spills to a temporary file."""
CHUNK = 1000
"""Memories looked up at once (which are already there); written in batches of `BATCH`."""
BATCH = 100
RESTORE_RECORDS = 500
"""Records restored per event at most; fewer when their attributes are large."""
RESTORE_BYTES = 256 * 1024
"""A restore event's attributes stay under this, well below Kafka's message limit."""
CHECKED_BY = Author(key_id="import", role="admin")
"""Stands for the importing key while lines are checked (only the reason is checked)."""
PUBLISH = 50
"""Restore and edit events published at once (acks=all)."""


@dataclass
class ImportReport:
    """What an import did: the source, each id's new name, and how many were written or found."""

    source_tenant: str
    import_id: str = ""
    agents: dict[str, str] = field(default_factory=dict)
    memories: dict[str, str] = field(default_factory=dict)
    agents_created: int = 0
    rules_set: int = 0
    written: int = 0
    present: int = 0
    documents: dict[str, str] = field(default_factory=dict)
    record_types: int = 0
    records: int = 0
    edits: int = 0
    restore_events: int = 0

    def counts(self) -> dict[str, int]:
        """What the import did, as its audit entry counts it."""
        return {
            "agents_created": self.agents_created,
            "rules_set": self.rules_set,
            "memories_written": self.written,
            "memories_present": self.present,
            "record_types": self.record_types,
            "documents": len(self.documents),
            "records_queued": self.records,
            "curator_edits": self.edits,
        }

    def answer(self) -> dict[str, Any]:
        """The import's answer body."""
        return {
            "import_id": self.import_id,
            "source_tenant": self.source_tenant,
            "agents": {"created": self.agents_created, "ids": self.agents},
            "retention": {"set": self.rules_set},
            "memories": {"written": self.written, "present": self.present, "ids": self.memories},
            "record_types": {"declared": self.record_types},
            "documents": {"ids": self.documents},
            "records": {
                "queued": self.records,
                "curator_edits": self.edits,
                "events": self.restore_events,
            },
        }


@dataclass
class SourceItem:
    """One source item's records as an import restores them."""

    source_item: str
    document_id: str | None
    lineage: dict[str, Any]
    records: list[RestoredRecord] = field(default_factory=list)


class TenantImport:
    """Restores an export into the caller's tenant, idempotently and resumably."""

    def __init__(
        self,
        owners: OwningServices,
        agents: AgentDirectory,
        writes: MemoryWrites,
        limits: ContentLimits,
        events: EventSink,
        audit: AuditTrail,
    ) -> None:
        self.events = events
        self.owners = owners
        self.agents = agents
        self.writes = writes
        self.limits = limits
        self.audit = audit

    async def run(self, caller: Caller, body: AsyncIterator[bytes]) -> ImportReport:
        """Check the whole body (422 naming the first thing wrong), then restore it, audited
        as started (the file's counts) and finished (what was written and found)."""
        import_id = f"imp_{uuid.uuid4().hex}"
        lines: Counter[str] = Counter()
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY) as spool:
            try:
                head = await self._checked(body, spool, lines)
            except ExportRefused as refused:
                raise Problem(422, "invalid-export", str(refused), line=refused.line) from None
            spool.seek(0)
            target = {"import_id": import_id}
            counts = {kind: lines[kind] for kind in export_format.BODY_KINDS}
            await self.audit.record(caller, "import.started", target, counts=counts)
            report = await self._restore(caller, str(head["tenant_id"]), spool)
        report.import_id = import_id
        await self.audit.record(caller, "import.finished", target, counts=report.counts())
        return report

    async def _checked(
        self, body: AsyncIterator[bytes], spool: IO[bytes], lines: Counter[str]
    ) -> dict[str, Any]:
        """Every line checked, counted by kind and spooled; the manifest once the checksum
        matched."""
        reader = export_format.Reader()
        agents: set[str] = set()
        pending = b""
        async for chunk in body:
            pending += chunk
            *complete, pending = pending.split(b"\n")
            if len(pending) > export_format.MAX_LINE_BYTES:
                raise ExportRefused("a line is too long", reader.number + 1)
            for line in complete:
                lines[self._check(reader, line, agents)] += 1
                spool.write(line + b"\n")
        if pending.strip():
            lines[self._check(reader, pending, agents)] += 1
            spool.write(pending + b"\n")
        return reader.finish()

    def _check(self, reader: export_format.Reader, line: bytes, agents: set[str]) -> str:
        """Check one line; its kind."""
        item = reader.feed(line)
        kind = item["kind"]
        if kind == "agent":
            if not isinstance(item.get("agent_id"), str):
                raise ExportRefused("agent line without its agent_id", reader.number)
            if not isinstance(item.get("name"), str | None):
                raise ExportRefused("agent name must be a string or null", reader.number)
            agents.add(item["agent_id"])
        elif kind in ("retention", "memory") and not _listed(item.get("agent_id"), agents):
            raise ExportRefused(f"{kind} line of an agent not listed before it", reader.number)
        if kind == "memory":
            transfer.memory_write(item, self.limits, reader.number)
            transfer.created_at(item, reader.number)
            transfer.edit_of(item, CHECKED_BY, reader.number)
            transfer.carried_vector(item, reader.number)
        elif kind == "record_type" and not (
            isinstance(item.get("name"), str) and isinstance(item.get("definition"), dict)
        ):
            raise ExportRefused("record_type line without its name and definition", reader.number)
        elif kind == "document" and not isinstance(item.get("document_id"), str):
            raise ExportRefused("document line without its document_id", reader.number)
        elif kind == "record":
            transfer.restored_record(item, reader.number)
            transfer.curator_edit(item, reader.number)
        elif kind == "retention":
            try:
                AgentRetention.model_validate({"rules": item.get("rules")})
            except ValidationError as bad:
                detail = f"retention rules: {bad.errors()[0]['msg']}"
                raise ExportRefused(detail, reader.number) from None
        return str(kind)

    async def _restore(self, caller: Caller, source: str, spool: IO[bytes]) -> ImportReport:
        report = ImportReport(source)
        chunk: list[dict[str, Any]] = []
        items: dict[str, SourceItem] = {}
        edits: list[Envelope[Any]] = []
        for raw in spool:
            item = json.loads(raw)
            kind = item["kind"]
            if chunk and (kind != "memory" or len(chunk) == CHUNK):
                await self._memories(caller, report, chunk)
                chunk = []
            if kind == "agent":
                await self._agent(caller.tenant_id, report, item)
            elif kind == "retention":
                await self._rules(caller.tenant_id, report, item)
            elif kind == "memory":
                chunk.append(item)
            elif kind == "record_type":
                await self._record_type(caller, report, item)
            elif kind == "document":
                new = transfer.imported_document_id(caller.tenant_id, source, item["document_id"])
                report.documents[item["document_id"]] = new
            elif kind == "record":
                self._record(caller.tenant_id, report, item, items, edits)
        if chunk:
            await self._memories(caller, report, chunk)
        restores = [e for i in items.values() for e in _restores(caller.tenant_id, source, i)]
        report.restore_events = len(restores)
        for events in (restores, edits):
            for start in range(0, len(events), PUBLISH):
                await publish_or_503(
                    self.events.publish_many(events[start : start + PUBLISH]),
                    "the records could not be queued; run the import again to finish it",
                )
        return report

    def _record(
        self,
        tenant_id: str,
        report: ImportReport,
        item: dict[str, Any],
        items: dict[str, SourceItem],
        edits: list[Envelope[Any]],
    ) -> None:
        """A curator's record becomes its edit again; any other joins its source item."""
        edit = transfer.curator_edit(item, 0)
        if edit is not None:
            cause = transfer.import_key(report.source_tenant, item["record_id"])
            edits.append(
                new_event(
                    FACT_EDIT_REQUESTED,
                    edit,
                    tenant_id=tenant_id,
                    event_id=derive_event_id(f"{tenant_id}:{cause}", "curator-edit"),
                )
            )
            report.edits += 1
            return
        name, document = transfer.restored_source_item(tenant_id, report.source_tenant, item)
        if document is not None:
            report.documents[item["lineage"]["document_id"]] = document
        group = items.setdefault(name, SourceItem(name, document, item["lineage"]))
        group.records.append(transfer.restored_record(item, 0))
        report.records += 1

    async def _record_type(
        self, caller: Caller, report: ImportReport, item: dict[str, Any]
    ) -> None:
        """Declare the source tenant's type unless the target's current one is the same (so a
        second run adds no version); before any record is restored, as extraction keys by it."""
        path = f"{TYPES_PATH}/{item['name']}"
        current = await self.owners.request("extraction", "GET", path, tenant_id=caller.tenant_id)
        if current.status_code == 200:
            found = current.json()
            if found.get("origin") == "tenant" and found.get("definition") == item["definition"]:
                return
        elif current.status_code != 404:
            raise Problem(503, "service-unavailable", "the extraction service could not answer")
        response = await self.owners.request(
            "extraction",
            "PUT",
            path,
            tenant_id=caller.tenant_id,
            json=item["definition"],
            params={"changed_by": caller.key_id},
        )
        if response.status_code == 422:
            raise Problem(422, "invalid-export", f"record type {item['name']!r}: {response.json()}")
        if response.status_code != 200:
            raise Problem(503, "service-unavailable", "the extraction service could not answer")
        report.record_types += 1

    async def _agent(self, tenant_id: str, report: ImportReport, item: dict[str, Any]) -> None:
        new = transfer.imported_agent_id(tenant_id, report.source_tenant, item["agent_id"])
        outcome = await self.agents.ensure_agent(tenant_id, new, item.get("name"))
        if outcome == "taken":
            raise Problem(
                409, "agent-deleted", f"agent {new} (imported from {item['agent_id']}) was deleted"
            )
        report.agents[item["agent_id"]] = new
        report.agents_created += outcome == "created"

    async def _rules(self, tenant_id: str, report: ImportReport, item: dict[str, Any]) -> None:
        path = f"/internal/v1/agents/{report.agents[item['agent_id']]}/retention"
        response = await self.owners.request(
            "memory", "PUT", path, tenant_id=tenant_id, json={"rules": item["rules"]}
        )
        if response.status_code != 200:
            raise Problem(503, "service-unavailable", "the memory service could not set rules")
        report.rules_set += 1

    async def _memories(
        self, caller: Caller, report: ImportReport, items: list[dict[str, Any]]
    ) -> None:
        """Write the memories not already there, `BATCH` at a time per agent."""
        tenant_id = caller.tenant_id
        planned: list[tuple[str, str, dict[str, Any]]] = []
        for item in items:
            agent = report.agents[item["agent_id"]]
            key = transfer.import_key(report.source_tenant, item["memory_id"])
            new = transfer.imported_memory_id(tenant_id, agent, key)
            report.memories[item["memory_id"]] = new
            planned.append((agent, key, item))
        found = await self._known(tenant_id, [report.memories[i["memory_id"]] for i in items])
        missing = [p for p in planned if report.memories[p[2]["memory_id"]] not in found]
        report.present += len(planned) - len(missing)
        author = author_of(caller)
        by_agent: dict[str, list[Envelope[MemoryWriteRequested]]] = {}
        for agent, key, item in missing:
            write = transfer.memory_write(item, self.limits, 0)
            older = report.memories.get(str(item.get("supersedes")))
            if older is not None:
                write = write.model_copy(update={"supersedes": older})
            edit = transfer.edit_of(item, author, 0)
            when = transfer.created_at(item, 0)
            vector = transfer.carried_vector(item, 0)
            event = _event(tenant_id, agent, key, write, edit, when, vector)
            by_agent.setdefault(agent, []).append(event)
        for agent, events in by_agent.items():
            for start in range(0, len(events), BATCH):
                outcomes = await self.writes.write_batch(
                    tenant_id, agent, events[start : start + BATCH]
                )
                report.written += sum(not o.deduplicated for o in outcomes)

    async def _known(self, tenant_id: str, ids: list[str]) -> set[str]:
        """Which of the ids the memory service already holds (any status)."""
        response = await self.owners.request(
            "memory", "POST", KNOWN_PATH, tenant_id=tenant_id, json={"ids": ids}
        )
        if response.status_code != 200:
            raise Problem(503, "service-unavailable", "the memory service could not answer")
        return set(response.json()["known"])


def _listed(agent_id: Any, agents: set[str]) -> bool:
    """Whether a line names an agent an earlier agent line listed."""
    return isinstance(agent_id, str) and agent_id in agents


def _event(
    tenant_id: str,
    agent_id: str,
    key: str,
    write: MemoryWrite,
    edit: tuple[Author, str | None],
    created_at: datetime | None,
    vector: tuple[list[float] | None, VectorProvenance | None] = (None, None),
) -> Envelope[MemoryWriteRequested]:
    """The bulk-lane write of one imported memory, under the id its key derives; an edited
    version keeps the key that made it and why, and names the version it supersedes; a stored
    vector travels with what made it."""
    author, reason = edit
    payload = MemoryWriteRequested(
        memory_id=transfer.imported_memory_id(tenant_id, agent_id, key),
        agent_id=agent_id,
        author=author,
        reason=reason,
        created_at=created_at,
        vector=vector[0],
        vector_provenance=vector[1],
        **{**write.model_dump(), "idempotency_key": key},
    )
    return new_event(MEMORY_BULK_WRITE_REQUESTED, payload, tenant_id=tenant_id)


def _restores(
    tenant_id: str, source_tenant: str, item: SourceItem
) -> list[Envelope[RecordsRestoreRequested]]:
    """A source item's records in events of at most `RESTORE_RECORDS` records and about
    `RESTORE_BYTES` of attributes; each id derives from the records it holds."""
    batches: list[list[RestoredRecord]] = [[]]
    size = 0
    for record in item.records:
        weight = len(json.dumps(record.attributes, default=str))
        if batches[-1] and (len(batches[-1]) == RESTORE_RECORDS or size + weight > RESTORE_BYTES):
            batches.append([])
            size = 0
        batches[-1].append(record)
        size += weight
    lineage = item.lineage
    events = []
    for batch in batches:
        restore_id = transfer.restore_id(
            tenant_id, source_tenant, item.source_item, [r.source_record_id for r in batch]
        )
        payload = RecordsRestoreRequested(
            restore_id=restore_id,
            source_tenant=source_tenant,
            source_item=item.source_item,
            default_type=batch[0].record_type,
            document_id=item.document_id,
            document_version=lineage.get("document_version"),
            source_item_id=lineage.get("source_item_id"),
            model=lineage.get("model"),
            records=batch,
        )
        events.append(
            new_event(
                RECORDS_RESTORE_REQUESTED,
                payload,
                tenant_id=tenant_id,
                event_id=derive_event_id(f"{tenant_id}:{restore_id}", "restore"),
            )
        )
    return events
