"""Starting prune jobs and describing them: what the public API and the dashboard ask."""

from __future__ import annotations

import secrets
from dataclasses import asdict
from typing import Any

from engram_events import Envelope, new_event
from engram_events.catalog import CONVERSATION_DELETED, DOCUMENT_DELETED, PRUNE_REQUESTED
from engram_events.payloads.conversations import ConversationDeleted
from engram_events.payloads.documents import DocumentDeleted
from engram_events.payloads.prune import PruneRequested, PruneSelector
from engram_gateway.domain.prune import JobKind
from engram_gateway.ports import PruneJobStore
from engram_platform.problems import Problem


def _trigger(
    tenant_id: str, job_id: str, kind: JobKind, selector: PruneSelector, agent_id: str | None
) -> Envelope[Any]:
    """The event that starts the cascade: a deleted document or conversation, or a prune."""
    if kind == "document":
        assert selector.document_id is not None
        deleted = DocumentDeleted(
            document_id=selector.document_id,
            source="gateway",
            reason="user_deleted",
            prune_job_id=job_id,
        )
        return new_event(DOCUMENT_DELETED, deleted, tenant_id=tenant_id)
    if kind == "conversation":
        assert selector.conversation_id is not None and agent_id is not None
        ended = ConversationDeleted(
            conversation_id=selector.conversation_id, agent_id=agent_id, prune_job_id=job_id
        )
        return new_event(CONVERSATION_DELETED, ended, tenant_id=tenant_id)
    requested = PruneRequested(prune_job_id=job_id, selector=selector)
    return new_event(PRUNE_REQUESTED, requested, tenant_id=tenant_id)


class Pruning:
    """Starts prune jobs (job row + event in one write) and reports their progress."""

    def __init__(self, jobs: PruneJobStore) -> None:
        self.jobs = jobs

    async def start(
        self,
        tenant_id: str,
        kind: JobKind,
        selector: PruneSelector,
        *,
        agent_id: str | None = None,
    ) -> str:
        """Create the job and stage its triggering event atomically with it."""
        job_id = f"prj_{secrets.token_hex(10)}"
        event = _trigger(tenant_id, job_id, kind, selector, agent_id)
        await self.jobs.open(tenant_id, job_id, kind, selector.model_dump(exclude_none=True), event)
        return job_id

    async def describe(
        self, tenant_id: str, job_id: str, *, full_selector: bool = False
    ) -> dict[str, Any]:
        """What `GET /v1/prune-jobs/{id}` shows: counts per stage, acknowledgements, verification,
        and the selector (long id lists cut to a preview unless the full one is asked for)."""
        job = await self.jobs.get(tenant_id, job_id)
        if job is None:
            raise Problem(404, detail="no such prune job")
        shown = job.selector_preview
        sizes = job.selector_sizes
        if full_selector:
            shown = await self.jobs.selector(job)
        progress = await self.jobs.progress(tenant_id, job)
        waiting = progress.pending(job.kind, job.subject)
        need = progress.expected_counts(job.kind, job.subject)
        verification = job.verification
        return {
            "prune_job_id": job_id,
            "kind": job.kind,
            "status": job.status,
            "selector": shown,
            "selector_sizes": sizes,
            "selector_truncated": any(len(v) < sizes[k] for k, v in shown.items() if k in sizes),
            "counts": dict(progress.counts),
            "acknowledgements": {
                svc: {"expected": need[svc], "pending": len(waiting[svc])} for svc in sorted(need)
            },
            "verified_empty": verification.verified_empty if verification else None,
            "verification": asdict(verification) if verification else None,
            "created_at": job.created_at.isoformat(),
            "completed_at": job.completed_at.isoformat() if job.completed_at else None,
        }

    async def recent(self, tenant_id: str) -> list[dict[str, Any]]:
        """The tenant's newest prune jobs, each described the way the public API does."""
        described = []
        for job_id in await self.jobs.recent(tenant_id):
            try:
                described.append(await self.describe(tenant_id, job_id))
            except Problem:
                continue
        return described
