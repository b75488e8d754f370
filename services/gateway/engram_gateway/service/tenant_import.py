"""Importing an export into the caller's tenant: the whole file is checked first (version,
every line, the checksum), then agents are created, rules set and memories written through the
write path under ids derived from the source, so a second run writes nothing twice."""

from __future__ import annotations

import json
import tempfile
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import IO, Any

from pydantic import ValidationError

from engram_events import Envelope, new_event
from engram_events.catalog import MEMORY_BULK_WRITE_REQUESTED
from engram_events.content import ContentLimits
from engram_events.payloads.memories import Author, MemoryWrite, MemoryWriteRequested
from engram_events.retention import AgentRetention
from engram_gateway.domain import export_format, transfer
from engram_gateway.domain.edits import author_of
from engram_gateway.domain.export_format import ExportRefused
from engram_gateway.domain.model import Caller
from engram_gateway.ports import AgentDirectory, OwningServices
from engram_gateway.service.audit import AuditTrail
from engram_gateway.service.memory_writes import MemoryWrites
from engram_platform.internal import KNOWN_PATH
from engram_platform.problems import Problem

SPOOL_IN_MEMORY = 8 * 1024 * 1024
"""A file up to this size is checked in memory; a larger one spills to a temporary file."""
CHUNK = 1000
"""Memories looked up at once (which are already there); written in batches of `BATCH`."""
BATCH = 100


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

    def counts(self) -> dict[str, int]:
        """What the import did, as its audit entry counts it."""
        return {
            "agents_created": self.agents_created,
            "rules_set": self.rules_set,
            "memories_written": self.written,
            "memories_present": self.present,
        }

    def answer(self) -> dict[str, Any]:
        """The import's answer body."""
        return {
            "import_id": self.import_id,
            "source_tenant": self.source_tenant,
            "agents": {"created": self.agents_created, "ids": self.agents},
            "retention": {"set": self.rules_set},
            "memories": {"written": self.written, "present": self.present, "ids": self.memories},
        }


class TenantImport:
    """Restores an export into the caller's tenant, idempotently and resumably."""

    def __init__(
        self,
        owners: OwningServices,
        agents: AgentDirectory,
        writes: MemoryWrites,
        limits: ContentLimits,
        audit: AuditTrail,
    ) -> None:
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
            counts = {kind: lines[kind] for kind in ("agent", "retention", "memory")}
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
        return report

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
            by_agent.setdefault(agent, []).append(_event(tenant_id, agent, key, write, author))
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
    tenant_id: str, agent_id: str, key: str, write: MemoryWrite, author: Author
) -> Envelope[MemoryWriteRequested]:
    """The bulk-lane write of one imported memory, under the id its key derives."""
    payload = MemoryWriteRequested(
        memory_id=transfer.imported_memory_id(tenant_id, agent_id, key),
        agent_id=agent_id,
        author=author,
        **{**write.model_dump(), "idempotency_key": key},
    )
    return new_event(MEMORY_BULK_WRITE_REQUESTED, payload, tenant_id=tenant_id)
