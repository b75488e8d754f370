"""Write requests: validate the content before anything is embedded, then open the rows."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from engram_events import Envelope
from engram_events.content import ContentLimits, content_problem
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.memories import MemoryWriteRequested
from engram_memory.domain import events
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.sources import withdrawn_by
from engram_memory.domain.writes import (
    Opening,
    as_duplicate,
    content_fields,
    dead_lettered_fields,
    row_fields,
    settled_at_birth,
    still_to_store,
)
from engram_memory.ports import MemoryRowStore
from engram_memory.service.dedup import Dedup

log = logging.getLogger(__name__)

OpenedRows = dict[tuple[str, str], MemoryRow]
"""Rows a pass opened, by tenant and memory id."""


class Writes:
    """Each request becomes a row: rejected, withdrawn at birth, or pending its vector."""

    def __init__(
        self,
        rows: MemoryRowStore,
        dedup: Dedup,
        limits: ContentLimits,
        *,
        require_all_sources: bool = False,
        fingerprint: Callable[[], str] | None = None,
    ) -> None:
        self.rows = rows
        self.dedup = dedup
        self.limits = limits
        self.require_all_sources = require_all_sources
        self.fingerprint = fingerprint

    async def requested(
        self,
        requests: list[Envelope[MemoryWriteRequested]],
        opened: OpenedRows | None = None,
    ) -> list[list[Envelope[Any]]]:
        """Each input's answer as if handled alone, with one row insert per tenant (and one
        lookup of gone sources when any are named); the rows opened pending go into `opened`
        when given, for a store in the same pass to use without reading them."""
        results: list[list[Envelope[Any]]] = [[] for _ in requests]
        for tenant in dict.fromkeys(e.tenant_id for e in requests):
            mine = [i for i, e in enumerate(requests) if e.tenant_id == tenant]
            rows = await self._open_rows(tenant, [(i, requests[i]) for i in mine], results)
            if opened is not None:
                opened.update({(tenant, row.memory_id): row for row in rows})
        return results

    async def dead_lettered(
        self, event: Envelope[MemoryWriteRequested], letter: DeadLetter
    ) -> list[Envelope[Any]]:
        """A write the consumer dead-lettered ends `rejected` with the reason, announced as any
        rejection is; a row already past pending is left as it is (announced if rejected)."""
        row = await self.rows.mark_dead_lettered(
            event.tenant_id, dead_lettered_fields(event, letter)
        )
        log.info(
            "memory dead-lettered",
            extra={
                "memory_id": event.payload.memory_id,
                "status": row.status,
                "error_type": letter.error_type,
            },
        )
        if row.status != "rejected":
            return []
        return [events.rejected(row, str(row.reason), event, row.duplicate_of)]

    async def _open_rows(
        self,
        tenant: str,
        inputs: list[tuple[int, Envelope[MemoryWriteRequested]]],
        results: list[list[Envelope[Any]]],
    ) -> list[MemoryRow]:
        """Rejected, withdrawn at birth, or pending with its embedding request: one per input;
        returns the rows this pass opened pending."""
        causes = dict(inputs)
        opening = await self._openings(tenant, inputs)
        pending = [(fields, causes[i].payload) for i, fields, st, _ in opening if st == "pending"]
        duplicates = await self.dedup.duplicates(tenant, pending)
        opening = [as_duplicate(entry, duplicates) for entry in opening]
        opened = await self.rows.open_many(tenant, [(f, status) for _, f, status, _ in opening])
        opened = await self._reopened(tenant, opening, opened)
        replayed = [
            f["memory_id"] for (_, f, _, _), r in zip(opening, opened, strict=True) if not r
        ]
        still = await self.rows.get_many(tenant, replayed) if replayed else {}
        for (i, fields, status, problem), row in zip(opening, opened, strict=True):
            event = causes[i]
            row = row or settled_at_birth(still, fields, status)
            if status == "rejected" and row is not None:
                log.info(
                    "memory rejected", extra={"memory_id": fields["memory_id"], "reason": problem}
                )
                results[i] = [events.rejected(row, str(problem), event, row.duplicate_of)]
            elif status == "withdrawn" and row is not None:
                results[i] = [events.withdrawn(row, "source_tombstoned", event)]
            elif status == "pending" and (row is not None or still_to_store(still, fields)):
                results[i] = [self._embedding(event)]
        return [row for row in opened if row is not None and row.status == "pending"]

    def _embedding(self, event: Envelope[MemoryWriteRequested]) -> Envelope[Any]:
        """The vector's request, or an imported vector made by this very embedder as its
        answer (one made by another is embedded again)."""
        carried = event.payload.vector_provenance
        if (
            event.payload.vector is not None
            and carried is not None
            and self.fingerprint is not None
            and carried.fingerprint == self.fingerprint()
        ):
            return events.carried_vector(event)
        return events.embedding_request(event)

    async def _reopened(
        self, tenant: str, opening: list[Opening], opened: list[MemoryRow | None]
    ) -> list[MemoryRow | None]:
        """Rows that already existed, opened again where a dead letter had left them rejected:
        a replayed letter is the write once more, not a replay of one that was applied."""
        existing = [n for n, row in enumerate(opened) if row is None]
        if not existing:
            return opened
        again = await self.rows.reopen_dead_lettered(
            tenant, [(opening[n][1], opening[n][2]) for n in existing]
        )
        merged = list(opened)
        for n, row in zip(existing, again, strict=True):
            merged[n] = row
        return merged

    async def _openings(
        self, tenant: str, inputs: list[tuple[int, Envelope[MemoryWriteRequested]]]
    ) -> list[Opening]:
        """Each input's row before dedup: rejected for its content, withdrawn when its sources
        are already gone, else pending with its content (sources indexed first)."""
        valid = []
        opening: list[Opening] = []
        for i, event in inputs:
            fields = row_fields(event)
            problem = content_problem(event.payload.content, self.limits)
            if problem is None:
                valid.append((i, event, fields))
            else:
                opening.append((i, {**fields, "reason": problem}, "rejected", problem))
        derived = [(e.payload.memory_id, e.payload.derived_from) for _, e, _ in valid]
        await self.rows.index_sources_many(tenant, [(m, d) for m, d in derived if d])
        named = sorted({source for _, sources in derived for source in sources})
        gone = await self.rows.gone(tenant, named) if named else set()
        for i, event, fields in valid:
            request = event.payload
            if withdrawn_by(request.derived_from, gone, self.require_all_sources):
                opening.append(
                    (i, {**fields, "withdrawn_reason": "source_tombstoned"}, "withdrawn", None)
                )
            else:
                opening.append((i, {**fields, **content_fields(request)}, "pending", None))
        return opening
