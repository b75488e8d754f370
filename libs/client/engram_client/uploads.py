"""Turning local files into uploads: the mime the gateway expects, and which files a folder holds."""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator
from pathlib import Path

MIME_BY_SUFFIX = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".json": "application/json",
    ".ndjson": "application/x-ndjson",
    ".jsonl": "application/x-ndjson",
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".html": "text/html",
    ".htm": "text/html",
}
"""The types the gateway's extractors read (the gateway's own table, engram_events.mimes, is
kept equal by a test: the client installs without the platform's libs)."""


def guess_mime(path: Path | str) -> str:
    """The gateway's mime for a file name, falling back to the platform's guess."""
    suffix = Path(path).suffix.lower()
    if suffix in MIME_BY_SUFFIX:
        return MIME_BY_SUFFIX[suffix]
    guessed, _ = mimetypes.guess_type(str(path))
    return guessed or "application/octet-stream"


def files_in(
    folder: Path, *, recursive: bool = True, include_hidden: bool = False
) -> Iterator[Path]:
    """Regular files under a folder, sorted, skipping dot-files unless asked."""
    pattern = "**/*" if recursive else "*"
    for path in sorted(folder.glob(pattern)):
        relative = path.relative_to(folder).parts
        if not include_hidden and any(part.startswith(".") for part in relative):
            continue
        if path.is_file():
            yield path
