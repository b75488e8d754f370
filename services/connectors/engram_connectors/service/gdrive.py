"""The Google Drive poller: the changes feed becomes `document.submitted` / `document.deleted`.

The cursor is Drive's page token, stored in MongoDB. A page's events are all published and
acknowledged by Kafka before the cursor moves past the page, so a crash or a transient
error replays the page; replays are harmless because each file's last submitted revision
is remembered and event ids are derived from (tenant, file, Drive version, content hash).
Drive's feed is an ordered log, not a timestamp query: two files sharing one `modifiedTime`
are two changes and both are submitted.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any

from engram_connectors.domain import events
from engram_connectors.domain.content import check_content
from engram_connectors.domain.drive import (
    Change,
    DriveFile,
    DriveItem,
    ItemUnavailable,
    deletion_needed,
    is_active,
    plan,
)
from engram_connectors.domain.events import Source
from engram_connectors.ports import DriveApi, DriveState, Publisher
from engram_events.payloads.documents import DeletionReason

log = logging.getLogger(__name__)

SOURCE: Source = "gdrive"


@dataclass
class DrivePassReport:
    """What one poll did, for logs and tests."""

    pages: int = 0
    submitted: int = 0
    deleted: int = 0
    unchanged: int = 0
    rejected: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


class DrivePoller:
    """Polls one Drive connection for one tenant; the cursor only moves past committed pages."""

    def __init__(
        self,
        api: DriveApi,
        state: DriveState,
        publisher: Publisher,
        *,
        tenant_id: str,
        connection: str = "default",
        page_size: int = 100,
        interval: float = 30.0,
        max_bytes: int,
        start_page_token: str | None = None,
    ) -> None:
        self.api = api
        self.state = state
        self.publisher = publisher
        self.tenant_id = tenant_id
        self.connection = connection
        self.page_size = page_size
        self.interval = interval
        self.max_bytes = max_bytes
        self.start_page_token = start_page_token

    async def run(self) -> None:
        """Poll until cancelled; a failed poll leaves the cursor where it was and tries again."""
        while True:
            try:
                await self.poll_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning(
                    "drive poll failed; cursor kept",
                    extra={"tenant_id": self.tenant_id, "error_type": type(exc).__name__},
                )
            await asyncio.sleep(self.interval)

    async def poll_once(self) -> DrivePassReport:
        """Read pages until Drive says there are no more; commit each page's cursor after it."""
        report = DrivePassReport()
        token = await self.state.cursor(self.tenant_id, self.connection)
        if token is None:
            token = self.start_page_token or await self.api.start_page_token()
            await self.state.save_cursor(self.tenant_id, self.connection, token)
        while True:
            page = await self.api.changes(token, self.page_size)
            for change in page.changes:
                await self._apply(change, report)
            if page.following_token != token:
                token = page.following_token
                await self.state.save_cursor(self.tenant_id, self.connection, token)
            report.pages += 1
            if page.next_page_token is None:
                break
        if report.submitted or report.deleted or report.rejected:
            log.info(
                "drive poll",
                extra={
                    "tenant_id": self.tenant_id,
                    "pages": report.pages,
                    "submitted": report.submitted,
                    "deleted": report.deleted,
                    "rejected": report.rejected,
                },
            )
        return report

    async def _apply(self, change: Change, report: DrivePassReport) -> None:
        """One change; raises on anything transient so the page is replayed."""
        item = await self.state.item(self.tenant_id, change.file_id)
        if change.removed:
            await self._delete(change.file_id, item, "drive_removed", report)
            return
        try:
            meta = await self.api.file(change.file_id)
        except ItemUnavailable:
            await self._delete(change.file_id, item, "permission_lost", report)
            return
        if meta.trashed:
            await self._delete(change.file_id, item, "drive_trashed", report)
            return
        decision = plan(meta, item, max_bytes=self.max_bytes)
        if decision.action == "unchanged" or decision.action == "ignore":
            report.unchanged += 1
            return
        if decision.action == "reject":
            await self._reject(meta, item, decision.reason, report)
            return
        try:
            if decision.export_mime:
                content = await self.api.export(meta.id, decision.export_mime)
            else:
                content = await self.api.download(meta.id)
        except ItemUnavailable:
            await self._delete(change.file_id, item, "permission_lost", report)
            return
        rejection = check_content(content, decision.mime, max_bytes=self.max_bytes)
        if rejection is not None:
            await self._reject(meta, item, rejection.reason, report)
            return
        await self._submit(meta, decision.mime, content, item, report)

    async def _submit(
        self,
        meta: DriveFile,
        mime: str,
        content: bytes,
        item: DriveItem | None,
        report: DrivePassReport,
    ) -> None:
        """Publish a new version of the file's document, then remember it."""
        sha = hashlib.sha256(content).hexdigest()
        remembered = {"md5": meta.md5, "drive_version": meta.version, "content_sha256": sha}
        if is_active(item) and item.content_sha256 == sha:
            await self.state.save_item(self.tenant_id, meta.id, remembered)
            report.unchanged += 1
            return
        envelope = events.submitted(
            self.tenant_id,
            SOURCE,
            meta.id,
            name=meta.name or meta.id,
            mime=mime,
            content=content,
            revision=meta.revision,
        )
        await self.publisher.publish(envelope)
        await self.state.save_item(
            self.tenant_id,
            meta.id,
            {
                **remembered,
                "status": "active",
                "document_id": envelope.payload.document_id,
                "submitted_revision": meta.revision,
                "modified_time": meta.modified_time,
                "last_event_id": str(envelope.event_id),
            },
        )
        report.submitted += 1

    async def _delete(
        self,
        file_id: str,
        item: DriveItem | None,
        reason: DeletionReason,
        report: DrivePassReport,
    ) -> None:
        """Publish `document.deleted` once per submitted revision; nothing for unknown files."""
        if not deletion_needed(item):
            return
        envelope = events.deleted(
            self.tenant_id,
            SOURCE,
            file_id,
            reason=reason,
            revision=item.submitted_revision or "",
        )
        await self.publisher.publish(envelope)
        await self.state.save_item(
            self.tenant_id,
            file_id,
            {
                "status": "deleted",
                "deleted_reason": reason,
                "last_event_id": str(envelope.event_id),
            },
        )
        report.deleted += 1

    async def _reject(
        self, meta: DriveFile, item: DriveItem | None, reason: str, report: DrivePassReport
    ) -> None:
        """Remember why a revision was refused; a live earlier version stays live."""
        fields: dict[str, Any] = {"last_rejection": reason, "rejected_version": meta.version}
        if item is None:
            fields["status"] = "rejected"
        await self.state.save_item(self.tenant_id, meta.id, fields)
        report.rejected += 1
        report.reasons[reason] = report.reasons.get(reason, 0) + 1
