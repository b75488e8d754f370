"""Exporting a tenant: its agents, their retention rules and live memories, read page by page
from the memory service's internal API and streamed as the export format's lines."""

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
"""Memories read per call (the memory service's largest page)."""
EXPORTED_STATUS = "active"
"""Only live memories travel: what recall and a restored tenant's listings show."""


@dataclass(frozen=True)
class ExportPlan:
    """What one export will stream: the tenant, its agents and the manifest line."""

    tenant_id: str
    agents: Sequence[Agent]
    manifest: bytes
    memories: int = 0


class TenantExport:
    """Streams a tenant's export; nothing is held beyond one page of memories."""

    def __init__(self, owners: OwningServices) -> None:
        self.owners = owners

    async def plan(self, tenant_id: str, agents: Sequence[Agent]) -> ExportPlan:
        """Count what the export should hold, before the first byte is sent (a 503 here is an
        answer, not a cut stream)."""
        memories = 0
        if agents:
            counted = await self._call(
                tenant_id,
                "POST",
                "/internal/v1/memories/count",
                json={"agent_ids": [a.agent_id for a in agents], "status": EXPORTED_STATUS},
            )
            memories = int(counted["count"])
        counts = {"agent": len(agents), "retention": len(agents), "memory": memories}
        now = datetime.now(UTC).isoformat()
        manifest = export_format.manifest(tenant_id, now, counts)
        return ExportPlan(tenant_id, agents, manifest, memories)

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
                yield b"".join(writer.line("memory", memory) for memory in page)
        yield writer.checksum()

    async def _memories(self, tenant_id: str, agent_id: str) -> AsyncIterator[list[Any]]:
        """The agent's live memories, oldest first, a page at a time."""
        cursor: str | None = None
        while True:
            body = {
                "agent_ids": [agent_id],
                "status": EXPORTED_STATUS,
                "limit": PAGE,
                "order": "oldest",
                "cursor": cursor,
            }
            found = await self._call(tenant_id, "POST", "/internal/v1/memories/query", json=body)
            yield [_exported(memory) for memory in found["memories"]]
            cursor = found["next_cursor"]
            if cursor is None:
                return

    async def _call(self, tenant_id: str, method: str, path: str, **kw: Any) -> Any:
        response = await self.owners.request("memory", method, path, tenant_id=tenant_id, **kw)
        if response.status_code != 200:
            raise Problem(503, "service-unavailable", "the memory service could not answer")
        return response.json()


def _exported(memory: dict[str, Any]) -> dict[str, Any]:
    """A memory as the export holds it: the API's view, less how its vector was made."""
    return {k: v for k, v in memory.items() if k != "provenance"}
