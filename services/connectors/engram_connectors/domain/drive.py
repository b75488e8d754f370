"""Deciding what a Drive change means: submit a new revision, delete, or leave alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeGuard

from engram_connectors.domain.mime import GOOGLE_EXPORTS, GOOGLE_FOLDER, mime_for_drive


class ItemUnavailable(Exception):
    """Drive answered 403/404 for a file: it is gone or no longer readable by us."""

    def __init__(self, status: int) -> None:
        super().__init__(f"drive answered {status}")
        self.status = status


@dataclass(frozen=True)
class DriveFile:
    """The metadata the connector reads from `files.get`."""

    id: str
    name: str
    mime_type: str
    version: str
    modified_time: str
    trashed: bool = False
    md5: str | None = None
    size: int | None = None

    @property
    def revision(self) -> str:
        """Drive's per-file version: it grows on every change, so it names one revision."""
        return self.version


@dataclass(frozen=True)
class Change:
    """One entry of the changes feed."""

    file_id: str
    removed: bool
    time: str


@dataclass(frozen=True)
class ChangesPage:
    """One page of `changes.list`: the changes, and the token to read next."""

    changes: list[Change]
    next_page_token: str | None
    new_start_page_token: str | None

    @property
    def following_token(self) -> str:
        """Where the cursor goes once this page is committed."""
        token = self.next_page_token or self.new_start_page_token
        if not token:
            raise ValueError("changes page carries neither nextPageToken nor newStartPageToken")
        return token


@dataclass(frozen=True)
class Plan:
    """What to do with a file that is present and readable."""

    action: Literal["ignore", "unchanged", "reject", "fetch"]
    reason: str = ""
    mime: str = ""
    export_mime: str | None = None


@dataclass(frozen=True)
class DriveItem:
    """What the connector last did for one Drive file: its document's state downstream
    (`active`, `deleted` or `rejected`) and the revision and content it last submitted."""

    status: str | None = None
    md5: str | None = None
    drive_version: str | None = None
    content_sha256: str | None = None
    submitted_revision: str | None = None


def is_active(item: DriveItem | None) -> TypeGuard[DriveItem]:
    """True when the item's last effect downstream is a live document."""
    return item is not None and item.status == "active"


def plan(meta: DriveFile, item: DriveItem | None, *, max_bytes: int) -> Plan:
    """Fetch new content only: an unchanged md5 (or, for Google files, version) is skipped."""
    if meta.mime_type == GOOGLE_FOLDER:
        return Plan("ignore", "folder")
    mime = mime_for_drive(meta.mime_type, meta.name)
    if mime is None:
        return Plan("reject", "unsupported_type")
    if is_active(item) and _same_revision(meta, item):
        return Plan("unchanged")
    export_mime = GOOGLE_EXPORTS.get(meta.mime_type)
    if export_mime is None and meta.size is not None and meta.size > max_bytes:
        return Plan("reject", "too_large")
    return Plan("fetch", mime=mime, export_mime=export_mime)


def _same_revision(meta: DriveFile, item: DriveItem) -> bool:
    """Content is unchanged when the checksum matches; Google files have none, so use version."""
    if meta.md5:
        return item.md5 == meta.md5
    return item.drive_version == meta.version


def deletion_needed(item: DriveItem | None) -> TypeGuard[DriveItem]:
    """Only a live document is deleted; a repeat or never-submitted file needs nothing."""
    return is_active(item)
