"""An in-memory audit store behind the `record`/`page` port, selecting as the database does."""

from __future__ import annotations

from collections.abc import Sequence

from engram_platform.audit import AuditEntry, AuditQuery


class AuditEntries:
    """Entries kept by (tenant, entry id): a repeat is stored once; `failing` refuses writes."""

    def __init__(self, *, failing: bool = False) -> None:
        self.entries: dict[tuple[str, str], AuditEntry] = {}
        self.failing = failing

    async def record(self, entries: Sequence[AuditEntry]) -> None:
        if self.failing:
            raise ConnectionError("the database went away")
        for entry in entries:
            self.entries.setdefault((entry.tenant_id, entry.entry_id), entry)

    async def page(self, tenant_id: str, query: AuditQuery) -> list[AuditEntry]:
        kept = [e for (t, _), e in self.entries.items() if t == tenant_id and _selected(e, query)]
        kept.sort(key=lambda e: (e.at, e.entry_id), reverse=True)
        return kept[: query.limit]

    def of(self, action: str) -> list[AuditEntry]:
        """Every entry of one action, any tenant."""
        return [e for e in self.entries.values() if e.action == action]


def _selected(entry: AuditEntry, query: AuditQuery) -> bool:
    if query.actions and entry.action not in query.actions:
        return False
    if query.since is not None and entry.at < query.since:
        return False
    if query.until is not None and entry.at >= query.until:
        return False
    if query.target is not None and query.target not in entry.target.values():
        return False
    before = query.before
    return before is None or (entry.at, entry.entry_id) < (before.at, before.entry_id)
