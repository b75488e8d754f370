"""What the connectors' use cases need from the outside world, as Protocols."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from engram_connectors.domain.drive import ChangesPage, DriveFile, DriveItem
from engram_connectors.domain.stability import Observation
from engram_events import Envelope


class Publisher(Protocol):
    """Where connectors send events; `publish` returns once the event is durable."""

    async def publish(self, envelope: Envelope[Any]) -> None: ...


class TenantInbox(Protocol):
    """One tenant's drop folder: what lies in it, and where a handled file goes."""

    @property
    def tenant_id(self) -> str: ...

    def scan(self) -> dict[str, Observation]: ...

    def read(self, relative: str, seen: Observation, limit: int) -> bytes | None: ...

    def move_processed(self, relative: str, version: str) -> Path: ...

    def move_failed(self, relative: str, error: dict[str, Any]) -> Path: ...


class DropInboxes(Protocol):
    """Every connected tenant's drop folder."""

    def folders(self) -> Sequence[TenantInbox]: ...


class SubmissionLedger(Protocol):
    """Drop-file submissions keyed by tenant, relative path and content hash."""

    async def status(self, tenant_id: str, relative: str, sha256: str) -> str | None: ...

    async def begin(
        self, tenant_id: str, relative: str, sha256: str, fields: dict[str, Any]
    ) -> None: ...

    async def mark(self, tenant_id: str, relative: str, sha256: str, status: str) -> None: ...


class DriveState(Protocol):
    """The Drive connection's cursor and what it last submitted per file."""

    async def cursor(self, tenant_id: str, connection: str) -> str | None: ...

    async def save_cursor(self, tenant_id: str, connection: str, page_token: str) -> None: ...

    async def item(self, tenant_id: str, file_id: str) -> DriveItem | None: ...

    async def save_item(self, tenant_id: str, file_id: str, fields: dict[str, Any]) -> None: ...


class DriveApi(Protocol):
    """The subset of Drive v3 the connector calls."""

    async def start_page_token(self) -> str: ...

    async def changes(self, page_token: str, page_size: int) -> ChangesPage: ...

    async def file(self, file_id: str) -> DriveFile: ...

    async def download(self, file_id: str) -> bytes: ...

    async def export(self, file_id: str, mime: str) -> bytes: ...
