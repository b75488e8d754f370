"""Storing computed vectors: the point first, then the row, then supersession and retention."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.embeddings import EmbeddedItem, EmbeddingComputed, VectorProvenance
from engram_memory.domain import events
from engram_memory.domain.events import REQUESTER
from engram_memory.domain.rows import MemoryRow
from engram_memory.ports import MemoryPoints, MemoryRowStore
from engram_memory.service.retention import Retention
from engram_vectors import FingerprintMismatch

log = logging.getLogger(__name__)


def named(computed: EmbeddingComputed) -> list[str]:
    """The memory ids a result answers: those embedded, then those refused."""
    return [x.item_id for x in computed.items] + [r.item_id for r in computed.rejected]


class Storing:
    """A row never says `active` without its vector; vectors of another embedder are refused."""

    def __init__(self, rows: MemoryRowStore, vectors: MemoryPoints, retention: Retention) -> None:
        self.rows = rows
        self.vectors = vectors
        self.retention = retention

    async def computed(
        self,
        computed: list[Envelope[EmbeddingComputed]],
        known: Mapping[tuple[str, str], MemoryRow] | None = None,
    ) -> list[list[Envelope[Any]]]:
        """One row lookup per tenant, one upsert of the points and one bulk row update per
        embedder, then each input's events in order (results for other requesters: none; an
        event a replay announces for several rows, once). Rows in `known` (opened pending by
        this same pass) are not read again."""
        results: list[list[Envelope[Any]]] = [[] for _ in computed]
        ours = [i for i, e in enumerate(computed) if e.payload.requester == REQUESTER]
        for tenant in dict.fromkeys(computed[i].tenant_id for i in ours):
            mine = [i for i in ours if computed[i].tenant_id == tenant]
            ids = [item_id for i in mine for item_id in named(computed[i].payload)]
            rows = await self._rows(tenant, ids, known or {})
            pending = {m: row for m, row in rows.items() if row.status == "pending"}
            inputs = [(i, computed[i]) for i in mine]
            for i, event in self._rejected_before(inputs, rows):
                results[i].append(event)
            for i in mine:
                for refused in computed[i].payload.rejected:
                    row = pending.pop(refused.item_id, None)
                    if row is not None:
                        reason = f"embedder_{refused.reason}"
                        results[i].extend(await self._reject(row, reason, computed[i]))
            stored = [(*s, False) for s in await self._store_many(tenant, inputs, pending, results)]
            stored += [(*s, True) for s in self._stored_before(inputs, rows)]
            for i, row, provenance, replayed in sorted(stored, key=lambda s: s[0]):
                results[i].extend(await self._after_store(row, provenance, computed[i], replayed))
        return [list({e.event_id: e for e in result}.values()) for result in results]

    async def _rows(
        self, tenant: str, ids: list[str], known: Mapping[tuple[str, str], MemoryRow]
    ) -> dict[str, MemoryRow]:
        """The rows named, from those known where they are, the rest in one lookup."""
        rows = {m: known[(tenant, m)] for m in ids if (tenant, m) in known}
        missing = [m for m in ids if m not in rows]
        if missing:
            rows.update(await self.rows.get_many(tenant, missing))
        return rows

    @staticmethod
    def _rejected_before(
        inputs: list[tuple[int, Envelope[EmbeddingComputed]]], rows: dict[str, MemoryRow]
    ) -> list[tuple[int, Envelope[Any]]]:
        """Rows an earlier delivery of this result rejected (for the embedder's reason, answering
        the write that opened them): a delivery replayed after a crash before the publish
        announces them again, same event id."""
        again = []
        for i, event in inputs:
            for item_id in named(event.payload):
                row = rows.get(item_id)
                if row is None or row.status != "rejected" or not events.answers_write(row, event):
                    continue
                if row.reason and row.reason.startswith("embedder_"):
                    again.append((i, events.rejected(row, row.reason, event)))
        return again

    @staticmethod
    def _stored_before(
        inputs: list[tuple[int, Envelope[EmbeddingComputed]]], rows: dict[str, MemoryRow]
    ) -> list[tuple[int, MemoryRow, VectorProvenance]]:
        """Rows an earlier delivery of the same vectors stored (answering the write that opened
        them): a delivery replayed after a crash between the row update and the publish runs
        their after-store steps again (each one repeats safely: the supersession matches again,
        the event ids repeat)."""
        again = []
        for i, event in inputs:
            fingerprint = event.payload.provenance.fingerprint
            for item in event.payload.items:
                row = rows.get(item.item_id)
                if row is None or row.status not in ("active", "superseded"):
                    continue
                if not events.answers_write(row, event):
                    continue
                if row.fingerprint == fingerprint:
                    again.append((i, row, VectorProvenance.model_validate(row.provenance)))
        return again

    async def dead_lettered(
        self, event: Envelope[EmbeddingComputed], letter: DeadLetter
    ) -> list[Envelope[Any]]:
        """Vectors the consumer gave up on storing: each memory of ours they were for that is
        still pending ends `rejected` with the reason, instead of pending for ever (one this
        letter already rejected, for a replay after a crash, is announced again)."""
        if event.payload.requester != REQUESTER:
            return []
        reason = letter.item_reason()
        rows = await self.rows.get_many(event.tenant_id, named(event.payload))
        pending = [row for row in rows.values() if row.status == "pending"]
        before = [
            events.rejected(row, reason, event)
            for row in rows.values()
            if row.status == "rejected"
            and row.reason == reason
            and events.answers_write(row, event)
        ]
        log.info(
            "embedding results dead-lettered",
            extra={
                "event_id": str(event.event_id),
                "memories": len(pending),
                "error_type": letter.error_type,
            },
        )
        return before + [e for row in pending for e in await self._reject(row, reason, event)]

    async def _reject(
        self, row: MemoryRow, reason: str, cause: Envelope[Any]
    ) -> list[Envelope[Any]]:
        """A row still pending ends `rejected` (its content dropped) and is announced; one
        deleted or withdrawn meanwhile stays as it is."""
        tenant, memory_id = row.tenant_id, row.memory_id
        fields = {"status": "rejected", "reason": reason}
        if memory_id not in await self.rows.set_pending(
            tenant, [memory_id], fields, drop_content=True
        ):
            return []
        return [events.rejected(row, reason, cause)]

    async def _store_many(
        self,
        tenant: str,
        inputs: list[tuple[int, Envelope[EmbeddingComputed]]],
        pending: dict[str, MemoryRow],
        results: list[list[Envelope[Any]]],
    ) -> list[tuple[int, MemoryRow, VectorProvenance]]:
        """Points first, then the rows: a row never says `active` without its vector."""
        by_embedder: dict[str, list[tuple[int, MemoryRow, EmbeddedItem]]] = {}
        for i, event in inputs:
            for item in event.payload.items:
                row = pending.pop(item.item_id, None)
                if row is not None:
                    fingerprint = event.payload.provenance.fingerprint
                    by_embedder.setdefault(fingerprint, []).append((i, row, item))
        causes = dict(inputs)
        stored: list[tuple[int, MemoryRow, VectorProvenance]] = []
        for group in by_embedder.values():
            computed_with = causes[group[0][0]].payload.provenance
            statuses = ["superseded" if row.superseded_by else "active" for _, row, _ in group]
            entries = [
                (row, item.vector, st) for (_, row, item), st in zip(group, statuses, strict=True)
            ]
            try:
                kept = await self.vectors.put_many(entries, computed_with.model_dump())
            except FingerprintMismatch:
                for i, row, _ in group:
                    results[i].extend(await self._reject(row, "embedder_mismatch", causes[i]))
                continue
            provenance = VectorProvenance.model_validate(dict(kept))
            fields = {"provenance": provenance.model_dump(), "stored_at": datetime.now(UTC)}
            done: set[str] = set()
            for status in dict.fromkeys(statuses):
                done |= await self.rows.set_pending(
                    tenant,
                    [
                        row.memory_id
                        for (_, row, _), st in zip(group, statuses, strict=True)
                        if st == status
                    ],
                    {**fields, "status": status},
                )
            rows = [row for _, row, _ in group]
            missed = [row.memory_id for row in rows if row.memory_id not in done]
            if missed:
                done |= await self._superseded_meanwhile(tenant, missed, fields)
            await self._forget_moved_on(tenant, rows, done)
            stored += [(i, row, provenance) for i, row, _ in group if row.memory_id in done]
        return stored

    async def _superseded_meanwhile(
        self, tenant: str, missed: list[str], fields: dict[str, Any]
    ) -> set[str]:
        """A row a newer version named after this store read it ends `superseded`, its point
        first (it was put as active): the rows still pending that name their newer version."""
        late = {
            memory_id: row.superseded_by
            for memory_id, row in (await self.rows.get_many(tenant, missed)).items()
            if row.status == "pending" and row.superseded_by
        }
        if not late:
            return set()
        for memory_id, newer in late.items():
            await self.vectors.set_status(tenant, memory_id, "superseded", superseded_by=newer)
        log.info("memories superseded while stored", extra={"memories": len(late)})
        return await self.rows.set_pending(tenant, list(late), {**fields, "status": "superseded"})

    async def _forget_moved_on(self, tenant: str, rows: list[MemoryRow], done: set[str]) -> None:
        """A row deleted or withdrawn while its vector was being stored stays so: its point goes
        again (the withdrawal removed the points before this one was written)."""
        moved_on = [row.memory_id for row in rows if row.memory_id not in done]
        if not moved_on:
            return
        await self.vectors.remove(tenant, moved_on)
        log.info("memories moved on while stored", extra={"memories": len(moved_on)})

    async def _after_store(
        self,
        row: MemoryRow,
        provenance: VectorProvenance,
        cause: Envelope[Any],
        replayed: bool = False,
    ) -> list[Envelope[Any]]:
        """Supersede what it replaces, announce it, then apply the retention policy (replayed:
        what the first pass evicted is announced again)."""
        published: list[Envelope[Any]] = []
        if row.supersedes:
            await self._supersede(row, row.supersedes)
        published.append(events.stored(row, provenance, cause))
        tenant, agent = row.tenant_id, row.agent_id
        published.extend(
            await self.retention.enforce(tenant, agent, row.type, cause, replayed=replayed)
        )
        log.info("memory stored", extra={"memory_id": row.memory_id, "agent_id": agent})
        return published

    async def _supersede(self, newer: MemoryRow, older_id: str) -> None:
        """Mark the older memory of the same agent superseded; it stays, recall skips it. Each
        try is one conditional update, so a store settling the older row meanwhile is never
        undone: a pending row that becomes active between the tries is caught by the last."""
        tenant, by = newer.tenant_id, newer.memory_id
        for held in ("active", "pending", "active"):
            if await self.rows.supersede(
                tenant, older_id, agent_id=newer.agent_id, by=by, held=held
            ):
                if held == "active":
                    await self.vectors.set_status(tenant, older_id, "superseded", superseded_by=by)
                return
