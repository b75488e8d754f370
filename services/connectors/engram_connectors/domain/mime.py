"""Which files the pipeline can read, and the MIME type each one travels with."""

from __future__ import annotations

from pathlib import PurePosixPath

from engram_events.mimes import MIME_BY_SUFFIX

BY_EXTENSION: dict[str, str] = MIME_BY_SUFFIX
"""What extraction reads (text, tables, Markdown, PDF, Word, HTML); anything else is refused as
unsupported."""

SUPPORTED = frozenset(BY_EXTENSION.values())

GOOGLE_EXPORTS: dict[str, str] = {
    "application/vnd.google-apps.document": "text/html",
    "application/vnd.google-apps.spreadsheet": "text/csv",
}
"""Google-native files have no bytes of their own; Drive exports them to these types (a Doc as
HTML, so its headings become the passages' heading paths)."""

GOOGLE_FOLDER = "application/vnd.google-apps.folder"
GOOGLE_PREFIX = "application/vnd.google-apps."


def mime_for_name(name: str) -> str | None:
    """The MIME type a file name's extension maps to, or None when it is unsupported."""
    return BY_EXTENSION.get(PurePosixPath(name).suffix.lower())


def mime_for_drive(drive_mime: str, name: str) -> str | None:
    """A Drive file's type: its declared type when supported, else its extension's."""
    if drive_mime in SUPPORTED:
        return drive_mime
    if drive_mime in GOOGLE_EXPORTS:
        return GOOGLE_EXPORTS[drive_mime]
    if drive_mime.startswith(GOOGLE_PREFIX):
        return None
    return mime_for_name(name)
