"""The gateway's part of a prune: start jobs, collect acknowledgements, verify the end state."""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope, new_event
from engram_events.catalog import CONVERSATION_DELETED, DOCUMENT_DELETED, PRUNE_REQUESTED
from engram_events.payloads.conversations import ConversationDeleted
from engram_events.payloads.documents import DocumentDeleted
from engram_events.payloads.prune import PruneRequested, PruneSelector
from engram_events.payloads.tombstones import TombstoneApplied
from engram_gateway.adapters.internal import InternalServices
from engram_gateway.adapters.prune_jobs import JOBS, PruneJobs, preview, selector_of
from engram_gateway.domain.prune import Ack, JobKind, Progress
from engram_platform.consuming import BatchResult
from engram_platform.metrics import PipelineMetrics
from engram_platform.outbox import Outbox
from engram_platform.problems import Problem

log = logging.getLogger(__name__)

VERIFY_TIMEOUT_SECONDS = 300.0
"""A verification walks every tombstoned id; large prunes need far longer than a read."""

VERIFIERS: dict[str, tuple[str, ...]] = {
    "extraction": ("records",),
    "enrichment": ("records", "facts"),
    "memory": ("records", "facts", "documents", "conversations"),
    "ingest": ("documents",),
}
"""Which owning services are asked to prove nothing they hold still references the ids."""


def _ack(applied: TombstoneApplied) -> Ack:
    """The gateway's view of one `tombstone.applied`."""
    return Ack(
        service=applied.service,
        source_ids=frozenset(applied.source_ids),
        tombstoned_ids=frozenset(applied.tombstoned_ids),
        counts=dict(applied.counts),
    )


def _document_of(job: dict[str, Any]) -> str | None:
    """The deleted document a document job waits on (on the job; older jobs kept it in their
    selector), or the deleted conversation a conversation job waits on."""
    if job["kind"] == "conversation":
        return job.get("conversation_id")
    if "document_id" in job:
        return job["document_id"]
    return selector_of(job).get("document_id")


def _seconds_since(at: datetime) -> float:
    """Seconds from a stored time (naive ones are UTC) to now."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (datetime.now(UTC) - at).total_seconds()


class PruneFlow:
    """Starts prune jobs (job row + event in one write) and completes them when acknowledged."""

    def __init__(
        self,
        jobs: PruneJobs,
        outbox: Outbox,
        internal: InternalServices,
        *,
        verify_grace_seconds: float = 60.0,
        metrics: PipelineMetrics | None = None,
    ) -> None:
        self.jobs = jobs
        self.outbox = outbox
        self.internal = internal
        self.verify_grace = verify_grace_seconds
        self.metrics = metrics or PipelineMetrics("gateway")
        self._acknowledged = asyncio.Event()

    async def start(
        self,
        tenant_id: str,
        kind: JobKind,
        selector: PruneSelector,
        *,
        document_source: str = "gateway",
        agent_id: str | None = None,
    ) -> str:
        """Create the job and stage its triggering event atomically with it."""
        job_id = f"prj_{secrets.token_hex(10)}"
        event: Envelope[Any]
        if kind == "document":
            assert selector.document_id is not None
            event = new_event(
                DOCUMENT_DELETED,
                DocumentDeleted(
                    document_id=selector.document_id,
                    source=document_source,  # type: ignore[arg-type]
                    reason="user_deleted",
                    prune_job_id=job_id,
                ),
                tenant_id=tenant_id,
            )
        elif kind == "conversation":
            assert selector.conversation_id is not None and agent_id is not None
            event = new_event(
                CONVERSATION_DELETED,
                ConversationDeleted(
                    conversation_id=selector.conversation_id,
                    agent_id=agent_id,
                    prune_job_id=job_id,
                ),
                tenant_id=tenant_id,
            )
        else:
            event = new_event(
                PRUNE_REQUESTED,
                PruneRequested(prune_job_id=job_id, selector=selector),
                tenant_id=tenant_id,
            )
        now = datetime.now(UTC)
        given = selector.model_dump(exclude_none=True)
        shown, sizes = preview(given)
        await self.jobs.store_selector(tenant_id, job_id, given)
        await self.outbox.write_with_events(
            self.jobs.db[JOBS],
            self.jobs.job_key(tenant_id, job_id),
            {
                "$set": {
                    "tenant_id": tenant_id,
                    "job_id": job_id,
                    "kind": kind,
                    "selector_preview": shown,
                    "selector_sizes": sizes,
                    "document_id": selector.document_id,
                    "conversation_id": selector.conversation_id,
                    "status": "running",
                    "verified_empty": None,
                    "created_at": now,
                    "updated_at": now,
                    "ack_batches": [],
                }
            },
            [event],
            scope={"tenant_id": tenant_id},
        )
        return job_id

    async def on_applied(self, event: Envelope[TombstoneApplied]) -> list[Envelope[Any]]:
        """Store one service's acknowledgement for a job of this tenant."""
        [result] = await self.on_applied_batch([event])
        if isinstance(result, BaseException):
            raise result
        return []

    async def on_applied_batch(self, events: list[Envelope[TombstoneApplied]]) -> list[BatchResult]:
        """Store a run of acknowledgements: one job read and one job write per job, not per ack."""
        results: list[BatchResult] = [[] for _ in events]
        by_job: dict[tuple[str, str], list[int]] = {}
        for i, event in enumerate(events):
            by_job.setdefault((event.tenant_id, event.payload.prune_job_id), []).append(i)
        for (tenant_id, job_id), positions in by_job.items():
            try:
                if await self.jobs.get(tenant_id, job_id) is None:
                    log.warning(
                        "acknowledgement for an unknown prune job", extra={"prune_job_id": job_id}
                    )
                    continue
                acks = [(str(events[i].event_id), _ack(events[i].payload)) for i in positions]
                await self.jobs.add_acks(tenant_id, job_id, acks)
                self._acknowledged.set()
            except Exception as exc:
                for i in positions:
                    results[i] = exc
        return results

    async def describe(
        self, tenant_id: str, job_id: str, *, full_selector: bool = False
    ) -> dict[str, Any]:
        """What `GET /v1/prune-jobs/{id}` shows: counts per stage, acknowledgements, verification,
        and the selector (long id lists cut to a preview unless the full one is asked for)."""
        job = await self.jobs.get(tenant_id, job_id)
        if job is None:
            raise Problem(404, detail="no such prune job")
        if full_selector or "selector_preview" not in job:
            given = await self.jobs.selector(job)
            shown, sizes = preview(given)
            if full_selector:
                shown = given
        else:
            shown, sizes = job["selector_preview"], job.get("selector_sizes", {})
        progress = await self.jobs.progress(tenant_id, job)
        waiting = progress.pending(job["kind"], _document_of(job))
        need = progress.expected_counts(job["kind"], _document_of(job))
        return {
            "prune_job_id": job_id,
            "kind": job["kind"],
            "status": job["status"],
            "selector": shown,
            "selector_sizes": sizes,
            "selector_truncated": any(len(v) < sizes[k] for k, v in shown.items() if k in sizes),
            "counts": dict(progress.counts),
            "acknowledgements": {
                svc: {"expected": need[svc], "pending": len(waiting[svc])} for svc in sorted(need)
            },
            "verified_empty": job.get("verified_empty"),
            "verification": job.get("verification"),
            "created_at": job["created_at"].isoformat(),
            "completed_at": job["completed_at"].isoformat() if job.get("completed_at") else None,
        }

    async def verify(
        self, tenant_id: str, job: dict[str, Any], progress: Progress
    ) -> dict[str, Any]:
        """Ask every owning service whether anything active still references a tombstoned id."""
        ids = {
            "records": sorted(progress.tombstoned["extraction"]),
            "facts": sorted(progress.tombstoned["enrichment"]),
            "documents": [_document_of(job)] if job["kind"] == "document" else [],
            "conversations": [_document_of(job)] if job["kind"] == "conversation" else [],
        }
        services = [s for s in VERIFIERS if s != "ingest" or job["kind"] == "document"]
        if job["kind"] == "conversation":
            services = ["memory"]
        answers = await asyncio.gather(
            *(
                self._references(service, tenant_id, {k: ids[k] for k in VERIFIERS[service]})
                for service in services
            )
        )
        remaining = {s: refs for s, refs in zip(services, answers, strict=True) if refs is not None}
        unverified = [s for s, refs in zip(services, answers, strict=True) if refs is None]
        clean = not unverified and all(n == 0 for refs in remaining.values() for n in refs.values())
        return {"verified_empty": clean, "references": remaining, "unverified": unverified}

    async def _references(
        self, service: str, tenant_id: str, body: dict[str, list[str]]
    ) -> dict[str, Any] | None:
        """One owning service's count of what still references the ids; None if it did not
        answer (the services walk the ids at once, so a large prune waits for the slowest)."""
        try:
            response = await self.internal.request(
                service,
                "POST",
                "/internal/v1/prune/verify",
                tenant_id=tenant_id,
                json=body,
                timeout=VERIFY_TIMEOUT_SECONDS,
            )
        except Problem:
            return None
        if response.status_code != 200:
            return None
        references: dict[str, Any] = response.json().get("references", {})
        return references

    async def finalize_once(self) -> int:
        """Complete every running job whose cascade is fully acknowledged; returns how many."""
        done = 0
        for job in await self.jobs.running():
            tenant_id = job["tenant_id"]
            progress = await self.jobs.progress(tenant_id, job)
            if any(progress.pending(job["kind"], _document_of(job)).values()):
                continue
            verification = await self.verify(tenant_id, job, progress)
            if verification["unverified"] and not self._grace_over(job):
                continue
            await self.jobs.finish(job, verification)
            self.metrics.prune_finished(
                kind=job["kind"],
                verified_empty=verification["verified_empty"],
                seconds=_seconds_since(job["created_at"]),
            )
            done += 1
        return done

    def _grace_over(self, job: dict[str, Any]) -> bool:
        """An owning service that does not answer (restarting, say) is asked again for a while."""
        return _seconds_since(job.get("updated_at") or job["created_at"]) > self.verify_grace

    async def run_finalizer(self, interval: float = 0.5, least: float = 0.1) -> None:
        """Background loop: finish jobs as their acknowledgements arrive. A stored
        acknowledgement wakes it early (at most every `least` seconds), so a job completes
        without waiting out the interval."""
        while True:
            self._acknowledged.clear()
            try:
                await self.finalize_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("prune finalizer pass failed", extra={"error_type": type(exc).__name__})
            await asyncio.sleep(least)
            try:
                await asyncio.wait_for(self._acknowledged.wait(), max(0.0, interval - least))
            except TimeoutError:
                pass
