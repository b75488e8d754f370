"""The memory service's handlers: one typed input each, returning the events to publish."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope, derive_event_id, new_event
from engram_events.acks import merge_acknowledgements, tombstone_applied
from engram_events.catalog import EMBEDDING_REQUESTED, MEMORY_WITHDRAWN
from engram_events.content import ContentLimits, content_problem, content_sha256
from engram_events.memory_filter import metadata_instants
from engram_events.payloads.documents import DocumentTombstoned
from engram_events.payloads.embeddings import (
    EmbeddedItem,
    EmbeddingComputed,
    EmbeddingRequested,
    TextItem,
    VectorProvenance,
)
from engram_events.payloads.knowledge import FactWithdrawn
from engram_events.payloads.memories import AgentDeleted, MemoryWriteRequested
from engram_events.payloads.records import RecordTombstoned
from engram_events.payloads.tombstones import Stage
from engram_memory import events
from engram_memory.adapters.rows import CONTENT_FIELDS, MemoryRows
from engram_memory.adapters.vectors import MemoryVectors
from engram_memory.dedup import Dedup
from engram_memory.domain.sources import withdrawn_by
from engram_memory.retention import Retention
from engram_memory.withdrawal import LIVE_STATUSES, Withdrawal, Withdrawals
from engram_vectors import FingerprintMismatch

log = logging.getLogger(__name__)

REQUESTER = "memory"
SERVICE = "memory"


@dataclass(frozen=True)
class Gone:
    """One input that takes a source away: the event, the source's id, its job and stage."""

    event: Envelope[Any]
    source_id: str
    prune_job_id: str | None
    stage: Stage


def _row_fields(event: Envelope[MemoryWriteRequested]) -> dict[str, Any]:
    """What a memory's row records from its write request (content is added when kept)."""
    request = event.payload
    return {
        "memory_id": request.memory_id,
        "agent_id": request.agent_id,
        "type": request.type,
        "derived_from": list(request.derived_from),
        "supersedes": request.supersedes,
        "idempotency_key": request.idempotency_key,
        "user_id": request.user_id,
        "session_id": request.session_id,
        **({"extracted_by": request.extracted_by.model_dump()} if request.extracted_by else {}),
        "content_sha256": content_sha256(request.content),
        "content_chars": len(request.content),
        "created_at": event.occurred_at,
    }


def _still_pending(rows: dict[str, dict[str, Any]], fields: dict[str, Any]) -> bool:
    """A replay after the row was written but before its request was staged (the database
    went away mid-batch) must stage the same embedding request again, or it stays pending."""
    row = rows.get(fields["memory_id"])
    return (
        row is not None
        and row.get("status") == "pending"
        and row.get("content_sha256") == fields["content_sha256"]
    )


def _as_duplicate(
    entry: tuple[int, dict[str, Any], str, str | None], duplicates: dict[str, str]
) -> tuple[int, dict[str, Any], str, str | None]:
    """A pending write that duplicates a live memory becomes a rejected row naming it, without
    the content (the live memory already holds it)."""
    i, fields, status, _ = entry
    holder = duplicates.get(fields["memory_id"])
    if status != "pending" or holder is None:
        return entry
    kept = {k: v for k, v in fields.items() if k not in CONTENT_FIELDS}
    return i, {**kept, "reason": "duplicate", "duplicate_of": holder}, "rejected", "duplicate"


def _embedding_request(event: Envelope[MemoryWriteRequested]) -> Envelope[Any]:
    """The request for a pending memory's vector, with an id derived from its write request."""
    request = event.payload
    embed = EmbeddingRequested(
        request_id=request.memory_id,
        requester=REQUESTER,
        purpose="memory",
        items=[TextItem(item_id=request.memory_id, text=request.content)],
    )
    return new_event(
        EMBEDDING_REQUESTED,
        embed,
        tenant_id=event.tenant_id,
        caused_by=event,
        event_id=derive_event_id(event.event_id, "embed"),
    )


class MemoryHandlers:
    """Validate before embedding, store after embedding, withdraw when sources go."""

    def __init__(
        self,
        rows: MemoryRows,
        vectors: MemoryVectors,
        retention: Retention,
        withdrawals: Withdrawals,
        limits: ContentLimits,
        dedup: Dedup,
        *,
        require_all_sources: bool = False,
    ) -> None:
        self.dedup = dedup
        self.rows = rows
        self.vectors = vectors
        self.retention = retention
        self.withdrawals = withdrawals
        self.limits = limits
        self.require_all_sources = require_all_sources

    async def on_write_requested(
        self, event: Envelope[MemoryWriteRequested]
    ) -> list[Envelope[Any]]:
        """Check the content itself; only valid content is sent to the embedder."""
        [result] = await self.on_writes_requested([event])
        return result

    async def on_writes_requested(
        self, events: list[Envelope[MemoryWriteRequested]]
    ) -> list[list[Envelope[Any]]]:
        """The batch route of `memory.write_requested`: each input's answer as if handled alone,
        with one row insert per tenant (and one lookup of gone sources when any are named)."""
        results: list[list[Envelope[Any]]] = [[] for _ in events]
        for tenant in dict.fromkeys(e.tenant_id for e in events):
            mine = [i for i, e in enumerate(events) if e.tenant_id == tenant]
            await self._open_rows(tenant, [(i, events[i]) for i in mine], results)
        return results

    async def _open_rows(
        self,
        tenant: str,
        inputs: list[tuple[int, Envelope[MemoryWriteRequested]]],
        results: list[list[Envelope[Any]]],
    ) -> None:
        """Rejected, withdrawn at birth, or pending with its embedding request: one per input."""
        valid = []
        causes = dict(inputs)
        opening: list[tuple[int, dict[str, Any], str, str | None]] = []
        for i, event in inputs:
            fields = _row_fields(event)
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
                content = {
                    "content": request.content,
                    "metadata": request.metadata,
                    "metadata_at": metadata_instants(request.metadata),
                }
                opening.append((i, {**fields, **content}, "pending", None))
        pending = [(fields, causes[i].payload) for i, fields, st, _ in opening if st == "pending"]
        duplicates = await self.dedup.duplicates(tenant, pending)
        opening = [_as_duplicate(entry, duplicates) for entry in opening]
        opened = await self.rows.open_many(tenant, [(f, status) for _, f, status, _ in opening])
        replayed = [
            f["memory_id"]
            for (_, f, st, _), r in zip(opening, opened, strict=True)
            if r is None and st == "pending"
        ]
        still = await self.rows.get_many(tenant, replayed) if replayed else {}
        for (i, fields, status, problem), row in zip(opening, opened, strict=True):
            event = causes[i]
            if status == "rejected" and row is not None:
                log.info(
                    "memory rejected", extra={"memory_id": fields["memory_id"], "reason": problem}
                )
                results[i] = [events.rejected(row, str(problem), event, row.get("duplicate_of"))]
            elif status == "withdrawn" and row is not None:
                results[i] = [events.withdrawn(row, "source_tombstoned", event)]
            elif status == "pending" and (row is not None or _still_pending(still, fields)):
                results[i] = [_embedding_request(event)]

    async def on_computed(self, event: Envelope[EmbeddingComputed]) -> list[Envelope[Any]]:
        """Write the point and the row for each vector of ours, then announce and retain."""
        [result] = await self.on_computed_many([event])
        return result

    async def on_computed_many(
        self, events: list[Envelope[EmbeddingComputed]]
    ) -> list[list[Envelope[Any]]]:
        """The batch route of `embedding.computed`: one row lookup per tenant, one upsert of the
        points and one bulk row update per embedder, then each input's events in order."""
        results: list[list[Envelope[Any]]] = [[] for _ in events]
        ours = [i for i, e in enumerate(events) if e.payload.requester == REQUESTER]
        for tenant in dict.fromkeys(events[i].tenant_id for i in ours):
            mine = [i for i in ours if events[i].tenant_id == tenant]
            ids = [
                item_id
                for i in mine
                for item_id in [x.item_id for x in events[i].payload.items]
                + [r.item_id for r in events[i].payload.rejected]
            ]
            rows = await self.rows.get_many(tenant, ids)
            pending = {m: row for m, row in rows.items() if row["status"] == "pending"}
            for i in mine:
                for refused in events[i].payload.rejected:
                    row = pending.pop(refused.item_id, None)
                    if row is not None:
                        reason = f"embedder_{refused.reason}"
                        results[i].append(await self._reject(row, reason, events[i]))
            stored = await self._store_many(
                tenant, [(i, events[i]) for i in mine], pending, results
            )
            for i, row, provenance in stored:
                results[i].extend(await self._after_store(row, provenance, events[i]))
        return results

    async def _reject(
        self, row: dict[str, Any], reason: str, cause: Envelope[Any]
    ) -> Envelope[Any]:
        await self.rows.set_fields(
            row["tenant_id"],
            row["memory_id"],
            {"status": "rejected", "reason": reason},
            drop_content=True,
        )
        return events.rejected(row, reason, cause)

    async def _store_many(
        self,
        tenant: str,
        inputs: list[tuple[int, Envelope[EmbeddingComputed]]],
        pending: dict[str, dict[str, Any]],
        results: list[list[Envelope[Any]]],
    ) -> list[tuple[int, dict[str, Any], VectorProvenance]]:
        """Points first, then the rows: a row never says `active` without its vector."""
        by_embedder: dict[str, list[tuple[int, dict[str, Any], EmbeddedItem]]] = {}
        for i, event in inputs:
            for item in event.payload.items:
                row = pending.pop(item.item_id, None)
                if row is not None:
                    fingerprint = event.payload.provenance.fingerprint
                    by_embedder.setdefault(fingerprint, []).append((i, row, item))
        causes = dict(inputs)
        stored: list[tuple[int, dict[str, Any], VectorProvenance]] = []
        for group in by_embedder.values():
            provenance = causes[group[0][0]].payload.provenance
            statuses = [
                "superseded" if row.get("superseded_by") else "active" for _, row, _ in group
            ]
            entries = [
                (row, item.vector, st) for (_, row, item), st in zip(group, statuses, strict=True)
            ]
            try:
                await self.vectors.put_many(entries, provenance.model_dump())
            except FingerprintMismatch:
                for i, row, _ in group:
                    results[i].append(await self._reject(row, "embedder_mismatch", causes[i]))
                continue
            now = datetime.now(UTC)
            for status in dict.fromkeys(statuses):
                await self.rows.set_same(
                    tenant,
                    [
                        row["memory_id"]
                        for (_, row, _), st in zip(group, statuses, strict=True)
                        if st == status
                    ],
                    {"status": status, "provenance": provenance.model_dump(), "stored_at": now},
                )
            stored += [(i, row, provenance) for i, row, _ in group]
        return sorted(stored, key=lambda s: s[0])

    async def _after_store(
        self, row: dict[str, Any], provenance: VectorProvenance, cause: Envelope[Any]
    ) -> list[Envelope[Any]]:
        """Supersede what it replaces, announce it, then apply the retention policy."""
        published: list[Envelope[Any]] = []
        if row.get("supersedes"):
            await self._supersede(row, row["supersedes"])
        published.append(events.stored(row, provenance, cause))
        tenant, agent = row["tenant_id"], row["agent_id"]
        published.extend(await self.retention.enforce(tenant, agent, row["type"], cause))
        log.info("memory stored", extra={"memory_id": row["memory_id"], "agent_id": agent})
        return published

    async def _supersede(self, newer: dict[str, Any], older_id: str) -> None:
        """Mark the older memory of the same agent superseded; it stays, recall skips it."""
        tenant = newer["tenant_id"]
        older = await self.rows.get(tenant, older_id)
        if older is None or older["agent_id"] != newer["agent_id"]:
            return
        if older["status"] not in ("pending", "active"):
            return
        await self.rows.set_fields(
            tenant,
            older_id,
            {
                "status": "superseded" if older["status"] == "active" else older["status"],
                "superseded_by": newer["memory_id"],
            },
        )
        if older["status"] == "active":
            await self.vectors.set_status(
                tenant, older_id, "superseded", superseded_by=newer["memory_id"]
            )

    async def on_agent_deleted(self, event: Envelope[AgentDeleted]) -> list[Envelope[Any]]:
        """A deleted agent's memories are withdrawn (rows keep status and hashes)."""
        tenant, agent_id = event.tenant_id, event.payload.agent_id
        targets = await self.rows.select(
            {"tenant_id": tenant, "agent_id": agent_id, "status": list(LIVE_STATUSES)}
        )
        published = await self.withdrawals.in_handler(tenant, targets, "agent_deleted", event)
        log.info("agent deleted", extra={"agent_id": agent_id, "withdrawn": len(published)})
        return published

    async def on_record_tombstoned(self, event: Envelope[RecordTombstoned]) -> list[Envelope[Any]]:
        """Memories derived from a pruned record follow it."""
        return (await self.sources_gone([_record_gone(event)]))[0]

    async def on_records_tombstoned(
        self, events: list[Envelope[RecordTombstoned]]
    ) -> list[list[Envelope[Any]] | BaseException]:
        """The batch route of `record.tombstoned`: a prune brings one per record, and its job
        one acknowledgement per batch."""
        return merge_acknowledgements(await self.sources_gone([_record_gone(e) for e in events]))

    async def on_fact_withdrawn(self, event: Envelope[FactWithdrawn]) -> list[Envelope[Any]]:
        """Memories derived from a withdrawn fact follow it."""
        return (await self.sources_gone([_fact_gone(event)]))[0]

    async def on_facts_withdrawn(
        self, events: list[Envelope[FactWithdrawn]]
    ) -> list[list[Envelope[Any]] | BaseException]:
        """The batch route of `fact.withdrawn`: a prune brings one per fact, and its job one
        acknowledgement per batch."""
        return merge_acknowledgements(await self.sources_gone([_fact_gone(e) for e in events]))

    async def on_document_tombstoned(
        self, event: Envelope[DocumentTombstoned]
    ) -> list[Envelope[Any]]:
        """Memories derived from a deleted document follow it."""
        gone = event.payload
        return (
            await self.sources_gone([Gone(event, gone.document_id, gone.prune_job_id, "documents")])
        )[0]

    async def sources_gone(self, inputs: list[Gone]) -> list[list[Envelope[Any]]]:
        """Each input's answer, as if handled one after another, with one lookup and one
        withdrawal write per tenant."""
        results: list[list[Envelope[Any]]] = [[] for _ in inputs]
        for tenant in dict.fromkeys(g.event.tenant_id for g in inputs):
            mine = [i for i, g in enumerate(inputs) if g.event.tenant_id == tenant]
            sources = [inputs[i].source_id for i in mine]
            candidates = await self.rows.derived_via_index(tenant, sources, LIVE_STATUSES)
            gone: set[str] = set()
            if self.require_all_sources and candidates:
                named = sorted({s for row in candidates for s in row.get("derived_from", [])})
                gone = await self.rows.gone(tenant, named)
            await self.rows.mark_gone(tenant, sources)
            taken: set[str] = set()
            owed: list[list[dict[str, Any]]] = []
            for i in mine:
                gone.add(inputs[i].source_id)
                counted = gone if self.require_all_sources else {inputs[i].source_id}
                targets = [
                    row
                    for row in candidates
                    if row["memory_id"] not in taken
                    and withdrawn_by(row.get("derived_from", []), counted, self.require_all_sources)
                ]
                taken.update(row["memory_id"] for row in targets)
                owed.append(targets)
            withdrawn = await self.withdrawals.in_handler_many(
                tenant,
                [
                    Withdrawal(
                        targets,
                        "source_tombstoned",
                        inputs[i].event,
                        because_of=inputs[i].source_id,
                        prune_job_id=inputs[i].prune_job_id,
                    )
                    for i, targets in zip(mine, owed, strict=True)
                ],
            )
            for i, targets, published in zip(mine, owed, withdrawn, strict=True):
                results[i] = published + self._acknowledged(inputs[i], targets, len(published))
        log.info(
            "sources tombstoned",
            extra={
                "count": len(inputs),
                "withdrawn": sum(
                    1 for r in results for e in r if e.event_type == MEMORY_WITHDRAWN.name
                ),
            },
        )
        return results

    @staticmethod
    def _acknowledged(
        gone: Gone, targets: list[dict[str, Any]], withdrawn: int
    ) -> list[Envelope[Any]]:
        """The prune job's acknowledgement of one source gone, when it came from a job."""
        if not gone.prune_job_id:
            return []
        had_vectors = sum(1 for row in targets if row["status"] in ("active", "superseded"))
        return [
            tombstone_applied(
                gone.event,
                prune_job_id=gone.prune_job_id,
                service=SERVICE,
                counts={"memories": withdrawn, "vectors": had_vectors},
                source_ids=[gone.source_id],
                tombstoned_ids=[row["memory_id"] for row in targets],
            )
        ]


def _record_gone(event: Envelope[RecordTombstoned]) -> Gone:
    """A pruned record, as a source gone."""
    return Gone(event, event.payload.record_id, event.payload.prune_job_id, "records")


def _fact_gone(event: Envelope[FactWithdrawn]) -> Gone:
    """A withdrawn fact, as a source gone."""
    return Gone(event, event.payload.fact_id, event.payload.prune_job_id, "facts")
