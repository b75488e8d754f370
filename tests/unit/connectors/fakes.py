"""Hand-written fakes for the connectors' ports: Kafka, MongoDB and the Drive API."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from engram_connectors.domain.drive import (
    Change,
    ChangesPage,
    DriveFile,
    DriveItem,
    ItemUnavailable,
)
from engram_events import Envelope


@dataclass
class FakePublisher:
    """Records what was published; `fail_next` makes the next publishes raise, like a Kafka outage."""

    published: list[Envelope[Any]] = field(default_factory=list)
    fail_next: int = 0

    async def publish(self, envelope: Envelope[Any]) -> None:
        if self.fail_next:
            self.fail_next -= 1
            raise ConnectionError("broker unavailable")
        self.published.append(envelope)

    def of_type(self, event_type: str) -> list[Envelope[Any]]:
        return [e for e in self.published if e.event_type == event_type]


@dataclass
class FakeLedger:
    """Drop submissions in a dict keyed like the Mongo one."""

    rows: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)

    async def status(self, tenant_id: str, relative: str, sha256: str) -> str | None:
        row = self.rows.get((tenant_id, relative, sha256))
        return str(row["status"]) if row else None

    async def begin(
        self, tenant_id: str, relative: str, sha256: str, fields: dict[str, Any]
    ) -> None:
        self.rows.setdefault((tenant_id, relative, sha256), {**fields, "status": "submitting"})

    async def mark(self, tenant_id: str, relative: str, sha256: str, status: str) -> None:
        self.rows[(tenant_id, relative, sha256)]["status"] = status


@dataclass
class FakeDriveState:
    """Cursor history and items in memory; `history` shows every cursor the poller saved."""

    cursors: dict[tuple[str, str], str] = field(default_factory=dict)
    history: list[str] = field(default_factory=list)
    items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    async def cursor(self, tenant_id: str, connection: str) -> str | None:
        return self.cursors.get((tenant_id, connection))

    async def save_cursor(self, tenant_id: str, connection: str, page_token: str) -> None:
        self.cursors[(tenant_id, connection)] = page_token
        self.history.append(page_token)

    async def item(self, tenant_id: str, file_id: str) -> DriveItem | None:
        row = self.items.get((tenant_id, file_id))
        if row is None:
            return None
        return DriveItem(**{name: row.get(name) for name in DriveItem.__dataclass_fields__})

    async def save_item(self, tenant_id: str, file_id: str, fields: dict[str, Any]) -> None:
        self.items.setdefault((tenant_id, file_id), {}).update(fields)


@dataclass
class FakeFile:
    name: str
    content: bytes
    mime_type: str = "text/csv"
    version: int = 1
    modified_time: str = "2026-01-01T00:00:00.000Z"
    trashed: bool = False
    readable: bool = True


@dataclass
class FakeDrive:
    """A changes log with integer page tokens, like the HTTP stub but in-process."""

    files: dict[str, FakeFile] = field(default_factory=dict)
    log: list[Change] = field(default_factory=list)
    broken_downloads: set[str] = field(default_factory=set)
    exported: list[tuple[str, str]] = field(default_factory=list)

    def put(self, file_id: str, name: str, content: bytes, **kw: Any) -> None:
        existing = self.files.get(file_id)
        version = existing.version + 1 if existing else 1
        self.files[file_id] = FakeFile(name, content, version=version, **kw)
        self.log.append(Change(file_id, False, "t"))

    def trash(self, file_id: str) -> None:
        self.files[file_id].trashed = True
        self.files[file_id].version += 1
        self.log.append(Change(file_id, False, "t"))

    def untrash(self, file_id: str) -> None:
        self.files[file_id].trashed = False
        self.files[file_id].version += 1
        self.log.append(Change(file_id, False, "t"))

    def remove(self, file_id: str) -> None:
        del self.files[file_id]
        self.log.append(Change(file_id, True, "t"))

    async def start_page_token(self) -> str:
        return str(len(self.log) + 1)

    async def changes(self, page_token: str, page_size: int) -> ChangesPage:
        begin = int(page_token) - 1
        page = self.log[begin : begin + page_size]
        more = begin + page_size < len(self.log)
        return ChangesPage(
            page,
            str(int(page_token) + page_size) if more else None,
            None if more else str(len(self.log) + 1),
        )

    async def file(self, file_id: str) -> DriveFile:
        f = self.files.get(file_id)
        if f is None:
            raise ItemUnavailable(404)
        if not f.readable:
            raise ItemUnavailable(403)
        google = f.mime_type.startswith("application/vnd.google-apps.")
        return DriveFile(
            id=file_id,
            name=f.name,
            mime_type=f.mime_type,
            version=str(f.version),
            modified_time=f.modified_time,
            trashed=f.trashed,
            md5=None if google else hashlib.md5(f.content).hexdigest(),
            size=None if google else len(f.content),
        )

    async def download(self, file_id: str) -> bytes:
        if file_id in self.broken_downloads:
            raise TimeoutError("drive did not answer")
        return self.files[file_id].content

    async def export(self, file_id: str, mime: str) -> bytes:
        self.exported.append((file_id, mime))
        return self.files[file_id].content
