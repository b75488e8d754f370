"""Completing prune jobs: collect acknowledgements, then verify the end state with the owners."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from engram_events import Envelope
from engram_events.payloads.tombstones import TombstoneApplied
from engram_gateway.domain.prune import Ack, Progress, PruneJob, Verification
from engram_gateway.ports import OwningServices, PruneJobStore
from engram_platform.consuming import BatchResult
from engram_platform.metrics import PipelineMetrics
from engram_platform.problems import Problem

log = logging.getLogger(__name__)

VERIFY_TIMEOUT_SECONDS = 300.0
"""A verification walks every tombstoned id; large prunes need far longer than a read."""

VERIFIERS: dict[str, tuple[str, ...]] = {
    "extraction": ("records", "documents"),
    "enrichment": ("records", "facts", "documents"),
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
        counts={str(stage): n for stage, n in applied.counts.items()},
    )


def _seconds_since(at: datetime) -> float:
    """Seconds from a stored time (the database hands back naive UTC) to now."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (datetime.now(UTC) - at).total_seconds()


class PruneCompletion:
    """Stores acknowledgements as they arrive and completes every job whose cascade is done."""

    def __init__(
        self,
        jobs: PruneJobStore,
        owners: OwningServices,
        *,
        verify_grace_seconds: float = 60.0,
        metrics: PipelineMetrics | None = None,
    ) -> None:
        self.jobs = jobs
        self.owners = owners
        self.verify_grace = verify_grace_seconds
        self.metrics = metrics or PipelineMetrics("gateway")
        self._acknowledged = asyncio.Event()

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

    async def verify(self, tenant_id: str, job: PruneJob, progress: Progress) -> Verification:
        """Ask every owning service whether anything active still references a tombstoned id."""
        subject = job.subject
        ids: dict[str, list[str]] = {
            "records": sorted(progress.tombstoned["extraction"]),
            "facts": sorted(progress.tombstoned["enrichment"]),
            "documents": [subject] if job.kind == "document" and subject else [],
            "conversations": [subject] if job.kind == "conversation" and subject else [],
        }
        services = [s for s in VERIFIERS if s != "ingest" or job.kind == "document"]
        if job.kind == "conversation":
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
        return Verification(verified_empty=clean, references=remaining, unverified=unverified)

    async def _references(
        self, service: str, tenant_id: str, body: dict[str, list[str]]
    ) -> dict[str, int] | None:
        """One owning service's count of what still references the ids; None if it did not
        answer (the services walk the ids at once, so a large prune waits for the slowest)."""
        try:
            response = await self.owners.request(
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
        references: dict[str, int] = response.json().get("references", {})
        return references

    async def finalize_once(self) -> int:
        """Complete every running job whose cascade is fully acknowledged; returns how many."""
        done = 0
        for job in await self.jobs.running():
            progress = await self.jobs.progress(job.tenant_id, job)
            if any(progress.pending(job.kind, job.subject).values()):
                continue
            verification = await self.verify(job.tenant_id, job, progress)
            if verification.unverified and not self._grace_over(job):
                continue
            await self.jobs.finish(job, verification)
            self.metrics.prune_finished(
                kind=job.kind,
                verified_empty=verification.verified_empty,
                seconds=_seconds_since(job.created_at),
            )
            done += 1
        return done

    def _grace_over(self, job: PruneJob) -> bool:
        """An owning service that does not answer (restarting, say) is asked again for a while."""
        return _seconds_since(job.updated_at) > self.verify_grace

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
