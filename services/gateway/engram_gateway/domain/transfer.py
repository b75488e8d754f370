"""How an imported tenant's ids are named: stable per source and target, so a re-run finds what
an earlier run wrote instead of writing it twice (pure)."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import ValidationError

from engram_events.content import PROBLEMS, ContentLimits, content_problem
from engram_events.payloads.memories import MemoryWrite
from engram_gateway.domain.export_format import ExportRefused
from engram_gateway.domain.ids import memory_id_for

COPIED = ("content", "type", "metadata", "user_id", "session_id", "expires_at")
"""What a memory line carries into its new tenant; its lineage (`derived_from`, `supersedes`)
names ids of the source tenant and is left behind."""


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def imported_agent_id(target_tenant: str, source_tenant: str, source_agent: str) -> str:
    """The agent an import of `source_agent` creates in `target_tenant` (the same every run)."""
    return f"agt_{_digest('import', target_tenant, source_tenant, source_agent)[:24]}"


def import_key(source_tenant: str, source_memory: str) -> str:
    """The idempotency key an imported memory is written with (the same every run)."""
    return f"import:{_digest(source_tenant, source_memory)[:40]}"


def imported_memory_id(target_tenant: str, agent_id: str, key: str) -> str:
    """The id the write path gives the memory written with `key` under `agent_id`."""
    return memory_id_for(target_tenant, agent_id, key)


def memory_write(item: dict[str, Any], limits: ContentLimits, line: int) -> MemoryWrite:
    """A memory line as the write it becomes (duplicates allowed: the source already chose to
    keep them); a line the write path would refuse is refused here, before any write."""
    fields = {name: item[name] for name in COPIED if item.get(name) is not None}
    try:
        write = MemoryWrite(allow_duplicate=True, **fields)
    except ValidationError as bad:
        first = bad.errors()[0]
        where = ".".join(map(str, first["loc"])) or "memory"
        raise ExportRefused(f"memory {where}: {first['msg']}", line) from None
    problem = content_problem(write.content, limits)
    if problem is not None:
        raise ExportRefused(f"memory content {PROBLEMS[problem]}", line)
    for name in ("memory_id", "agent_id"):
        if not isinstance(item.get(name), str):
            raise ExportRefused(f"memory line without its {name}", line)
    return write
