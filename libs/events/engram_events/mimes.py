"""The document types extraction reads, and the file extensions that name them: one table for
the gateway (which types an upload sent without one) and the client."""

from __future__ import annotations

from pathlib import PurePath

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
DOCUMENT_SIGNATURES = {
    "application/pdf": (b"%PDF-",),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": (b"PK\x03\x04",),
    "text/html": (),
    "application/xhtml+xml": (),
}
"""Types read from their bytes (their own encoding, no UTF-8 check), with the bytes a file of
that type starts with (none to check for HTML, which declares its own charset)."""
TEXT_MIMES = frozenset(MIME_BY_SUFFIX.values()) - frozenset(DOCUMENT_SIGNATURES)
"""UTF-8 text types."""
READABLE_MIMES = TEXT_MIMES | frozenset(DOCUMENT_SIGNATURES)
"""Everything extraction reads; other types are refused with 415."""
UNTYPED = frozenset({"", "application/octet-stream"})
"""What a client sends when it does not know the type (curl -F, most HTTP libraries)."""


def mime_for_name(name: str) -> str | None:
    """The text type a file name's extension names, or None for an unknown extension."""
    return MIME_BY_SUFFIX.get(PurePath(name).suffix.lower())
