"""Exporting a tenant: its agents, their retention rules and memories (memory service), then
its own record types and live records (extraction) and documents' metadata (ingest), read page by page from the
owners' internal APIs and streamed as the export format's lines."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engram_gateway.domain import export_format
from engram_gateway.domain.model import Agent
from engram_gateway.ports import OwningServices
from engram_platform.problems import Problem

PAGE = 1000
"""Memories (and records) read per call (the memory service's largest page)."""
EXPORTED_STATUSES = ("active", "superseded", "expired")
"""What travels: live memories, the earlier versions an edit superseded (their history) and
expired ones; withdrawn, rejected and pending rows do not."""
RECORDS_PATH = "/internal/v1/records:export"
VECTORS_PATH = "/internal/v1/memories/vectors"
TYPES_PATH = "/internal/v1/schema/types"
RECORD_FIELDS = (
    "record_id",
    "record_type",
    "entity_id",
    "revision",
    "attributes",
    "content_sha256",
    "source_item",
    "lineage",
    "updated_at",
)
DOCUMENT_FIELDS = (
    "document_id",
    "name",
    "mime",
    "source",
    "status",
    "latest_version",
    "record_count",
    "versions",
    "created_at",
    "updated_at",
)


@dataclass(frozen=True)
class ExportPlan:
    """What one export will stream: the tenant, its agents and the manifest line."""

    tenant_id: str
    agents: Sequence[Agent]
    manifest: bytes
    memories: int = 0
    knowledge: bool = True
    vectors: bool = False


class TenantExport:
    """Streams a tenant's export; nothing is held beyond one page of memories."""

    def __init__(self, owners: OwningServices) -> None:
        self.owners = owners

    async def plan(
        self,
        tenant_id: str,
        agents: Sequence[Agent],
        *,
        knowledge: bool = True,
        vectors: bool = False,
    ) -> ExportPlan:
        """Count what the export should hold, before the first byte is sent (a 503 here is an
        answer, not a cut stream); `knowledge` adds the tenant's documents and records, so
        extraction must answer too."""
        memories = 0
        if agents:
            counted = await self._call(
                tenant_id,
                "POST",
                "/internal/v1/memories/count",
                json={"agent_ids": [a.agent_id for a in agents]},
            )
            by_status = counted.get("by_status") or {}
            memories = sum(int(by_status.get(s, 0)) for s in EXPORTED_STATUSES)
        counts = {"agent": len(agents), "retention": len(agents), "memory": memories}
        now = datetime.now(UTC).isoformat()
        if knowledge:
            await self._call(
                tenant_id, "GET", RECORDS_PATH, service="extraction", params={"limit": 1}
            )
        manifest = export_format.manifest(tenant_id, now, counts, vectors=vectors)
        return ExportPlan(tenant_id, agents, manifest, memories, knowledge, vectors)

    async def stream(self, plan: ExportPlan) -> AsyncIterator[bytes]:
        """The lines: manifest, then per agent its line, its rules and its memories, then the
        checksum. A failure mid-way ends the stream without a checksum, which import refuses."""
        writer = export_format.Writer()
        yield writer.raw(plan.manifest, export_format.MANIFEST)
        for agent in plan.agents:
            yield writer.line(
                "agent",
                {"agent_id": agent.agent_id, "name": agent.name, "created_at": agent.created_at},
            )
            path = f"/internal/v1/agents/{agent.agent_id}/retention"
            rules = await self._call(plan.tenant_id, "GET", path)
            yield writer.line("retention", {"agent_id": agent.agent_id, "rules": rules["rules"]})
            async for page in self._memories(plan.tenant_id, agent.agent_id):
                if plan.vectors and page:
                    page = await self._with_vectors(plan.tenant_id, page)
                yield b"".join(writer.line("memory", memory) for memory in page)
        if plan.knowledge:
            found = await self._call(plan.tenant_id, "GET", TYPES_PATH, service="extraction")
            yield b"".join(
                writer.line("record_type", {"name": t["name"], "definition": t["definition"]})
                for t in found["types"]
                if t.get("origin") == "tenant"
            )
            documents: set[str] = set()
            async for records in self._records(plan.tenant_id):
                lines = []
                for record in records:
                    document = record["lineage"].get("document_id")
                    if document is not None and document not in documents:
                        documents.add(document)
                        lines.append(writer.line("document", await self._document(plan, document)))
                    lines.append(writer.line("record", record))
                yield b"".join(lines)
        yield writer.checksum()

    async def _memories(self, tenant_id: str, agent_id: str) -> AsyncIterator[list[Any]]:
        """The agent's live, superseded and expired memories, oldest first (an earlier version
        before the one superseding it), a page at a time."""
        cursor: str | None = None
        while True:
            body = {
                "agent_ids": [agent_id],
                "limit": PAGE,
                "order": "oldest",
                "cursor": cursor,
            }
            found = await self._call(tenant_id, "POST", "/internal/v1/memories/query", json=body)
            yield [
                _exported(memory)
                for memory in found["memories"]
                if memory.get("status") in EXPORTED_STATUSES
            ]
            cursor = found["next_cursor"]
            if cursor is None:
                return

    async def _with_vectors(
        self, tenant_id: str, page: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The page's memories with their stored vectors and the embedder that made them."""
        ids = [m["memory_id"] for m in page]
        found = await self._call(tenant_id, "POST", VECTORS_PATH, json={"ids": ids})
        vectors, provenance = found["vectors"], found["provenance"]
        return [
            {**m, "vector": vectors[m["memory_id"]], "vector_provenance": provenance}
            if m["memory_id"] in vectors
            else m
            for m in page
        ]

    async def _records(self, tenant_id: str) -> AsyncIterator[list[dict[str, Any]]]:
        """The tenant's live records (a marker of a pruned one is not exported), a page at a
        time, each with its source item."""
        cursor: str | None = None
        while True:
            params = {"limit": PAGE, **({"cursor": cursor} if cursor else {})}
            found = await self._call(
                tenant_id, "GET", RECORDS_PATH, service="extraction", params=params
            )
            yield [_record(r) for r in found["records"] if r.get("status") == "active"]
            cursor = found["next_cursor"]
            if cursor is None:
                return

    async def _document(self, plan: ExportPlan, document_id: str) -> dict[str, Any]:
        """A document's metadata (never its bytes); one ingest no longer knows is named only."""
        response = await self.owners.request(
            "ingest", "GET", f"/internal/v1/documents/{document_id}", tenant_id=plan.tenant_id
        )
        if response.status_code == 404:
            return {"document_id": document_id, "status": "unknown"}
        if response.status_code != 200:
            raise Problem(503, "service-unavailable", "the ingest service could not answer")
        found: dict[str, Any] = response.json()
        return {k: v for k, v in found.items() if k in DOCUMENT_FIELDS}

    async def _call(
        self, tenant_id: str, method: str, path: str, service: str = "memory", **kw: Any
    ) -> Any:
        response = await self.owners.request(service, method, path, tenant_id=tenant_id, **kw)
        if response.status_code != 200:
            raise Problem(503, "service-unavailable", f"the {service} service could not answer")
        return response.json()


def _record(record: dict[str, Any]) -> dict[str, Any]:
    """A record as the export holds it: content, revision, source item and lineage."""
    return {k: v for k, v in record.items() if k in RECORD_FIELDS}


def _exported(memory: dict[str, Any]) -> dict[str, Any]:
    """A memory as the export holds it: the API's view, less how its vector was made."""
    return {k: v for k, v in memory.items() if k != "provenance"}
