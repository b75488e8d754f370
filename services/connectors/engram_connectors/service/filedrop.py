"""The file-drop watcher: stable files become `document.submitted`, then leave the inbox.

A file moves to `processed/` only after Kafka acknowledged its event (acks=all on an
idempotent producer): from then on the event is in the replicated log and ingest's
consumer, which commits offsets only after its own durable writes, cannot lose it. The
submission is recorded in MongoDB before publishing, keyed by tenant, path and content
hash, so a restart finishes the move of an already-submitted file instead of re-sending
it, and a crash before the acknowledgement re-sends the same event id (deduped downstream).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engram_connectors.domain import events
from engram_connectors.domain.content import Rejection, check_content
from engram_connectors.domain.events import Source
from engram_connectors.domain.identity import document_id, version_of
from engram_connectors.domain.mime import mime_for_name
from engram_connectors.domain.paths import safe_relative_path
from engram_connectors.domain.stability import Observation, StabilityTracker
from engram_connectors.ports import DropInboxes, Publisher, SubmissionLedger, TenantInbox

log = logging.getLogger(__name__)

SOURCE: Source = "file_drop"


@dataclass
class PassReport:
    """What one scan did, for logs and tests."""

    submitted: int = 0
    already_submitted: int = 0
    failed: int = 0
    errors: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


class FileDropWatcher:
    """Scans every tenant's inbox on an interval; one file's failure never stops the others."""

    def __init__(
        self,
        root: DropInboxes,
        ledger: SubmissionLedger,
        publisher: Publisher,
        *,
        max_bytes: int,
        interval: float,
        concurrency: int = 8,
    ) -> None:
        self.root = root
        self.ledger = ledger
        self.publisher = publisher
        self.max_bytes = max_bytes
        self.interval = interval
        self.trackers: dict[str, StabilityTracker] = {}
        self._slots = asyncio.Semaphore(concurrency)

    async def run(self) -> None:
        """Scan until cancelled; a failed pass is logged and the next one tries again."""
        while True:
            try:
                await self.scan_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("file-drop pass failed", extra={"error_type": type(exc).__name__})
            await asyncio.sleep(self.interval)

    async def scan_once(self) -> PassReport:
        """One pass over every tenant folder; stable files are handled a few at a time."""
        report = PassReport()
        for folder in await asyncio.to_thread(self.root.folders):
            tracker = self.trackers.setdefault(folder.tenant_id, StabilityTracker())
            scan = await asyncio.to_thread(folder.scan)
            await asyncio.gather(
                *(
                    self._handle_guarded(folder, tracker, relative, scan[relative], report)
                    for relative in tracker.observe(scan)
                )
            )
        if report.submitted or report.failed or report.errors:
            log.info(
                "file-drop pass",
                extra={
                    "submitted": report.submitted,
                    "already_submitted": report.already_submitted,
                    "failed": report.failed,
                    "errors": report.errors,
                },
            )
        return report

    async def _handle_guarded(
        self,
        folder: TenantInbox,
        tracker: StabilityTracker,
        relative: str,
        seen: Observation,
        report: PassReport,
    ) -> None:
        """Handle one file; on failure it stays put and is retried on the next pass."""
        async with self._slots:
            try:
                await self._handle(folder, relative, seen, report)
            except Exception as exc:
                report.errors += 1
                log.warning(
                    "file-drop item failed; retrying next pass",
                    extra={"tenant_id": folder.tenant_id, "error_type": type(exc).__name__},
                )
                return
        tracker.forget(relative)

    async def _handle(
        self, folder: TenantInbox, relative: str, seen: Observation, report: PassReport
    ) -> None:
        """Refuse, submit, or finish moving one stable file."""
        safe = safe_relative_path(relative)
        if safe is None:
            await self._fail(
                folder,
                relative,
                Rejection("unsafe_name", "the path is not a plain UTF-8 name"),
                report,
            )
            return
        mime = mime_for_name(safe)
        if mime is None:
            await self._fail(
                folder,
                relative,
                Rejection("unsupported_type", "the file extension is not a supported type"),
                report,
            )
            return
        if seen.size > self.max_bytes:
            await self._fail(
                folder,
                relative,
                Rejection("too_large", f"{seen.size} bytes exceeds the limit of {self.max_bytes}"),
                report,
            )
            return
        content = await asyncio.to_thread(folder.read, relative, seen, self.max_bytes + 1)
        if content is None:
            return
        rejection = check_content(content, mime, max_bytes=self.max_bytes)
        if rejection is not None:
            await self._fail(folder, relative, rejection, report, content)
            return
        await self._submit(folder, safe, relative, mime, content, report)

    async def _submit(
        self,
        folder: TenantInbox,
        safe: str,
        relative: str,
        mime: str,
        content: bytes,
        report: PassReport,
    ) -> None:
        """Record, publish and wait for the ack, then move; a known submission is only moved."""
        tenant = folder.tenant_id
        sha = hashlib.sha256(content).hexdigest()
        known = await self.ledger.status(tenant, safe, sha)
        if known is None or known == "submitting":
            envelope = events.submitted(
                tenant, SOURCE, safe, name=safe.rsplit("/", 1)[-1], mime=mime, content=content
            )
            await self.ledger.begin(
                tenant,
                safe,
                sha,
                {
                    "document_id": document_id(tenant, SOURCE, safe),
                    "version": version_of(sha),
                    "event_id": str(envelope.event_id),
                    "size_bytes": len(content),
                },
            )
            await self.publisher.publish(envelope)
            await self.ledger.mark(tenant, safe, sha, "submitted")
            report.submitted += 1
            log.info(
                "file submitted",
                extra={
                    "tenant_id": tenant,
                    "document_id": envelope.payload.document_id,
                    "event_id": str(envelope.event_id),
                    "content_sha256": sha,
                },
            )
        else:
            report.already_submitted += 1
        await asyncio.to_thread(folder.move_processed, relative, version_of(sha))
        await self.ledger.mark(tenant, safe, sha, "moved")

    async def _fail(
        self,
        folder: TenantInbox,
        relative: str,
        rejection: Rejection,
        report: PassReport,
        content: bytes | None = None,
    ) -> None:
        """Move a refused file to `failed/` with its reason; the report carries no content."""
        error: dict[str, Any] = {
            "reason": rejection.reason,
            "detail": rejection.detail,
            "tenant_id": folder.tenant_id,
            "failed_at": datetime.now(UTC).isoformat(),
        }
        if content is not None:
            error["size_bytes"] = len(content)
            error["content_sha256"] = hashlib.sha256(content).hexdigest()
        await asyncio.to_thread(folder.move_failed, relative, error)
        report.failed += 1
        report.reasons[rejection.reason] = report.reasons.get(rejection.reason, 0) + 1
        log.info(
            "file refused",
            extra={"tenant_id": folder.tenant_id, "reason": rejection.reason},
        )
