"""The document types the built-in extractors read, and the file extensions that name them:
one table for the gateway (which types an upload sent without one) and the client."""

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
}
TEXT_MIMES = frozenset(MIME_BY_SUFFIX.values())
"""What the built-in extractors read; other types are refused with 415."""
UNTYPED = frozenset({"", "application/octet-stream"})
"""What a client sends when it does not know the type (curl -F, most HTTP libraries)."""


def mime_for_name(name: str) -> str | None:
    """The text type a file name's extension names, or None for an unknown extension."""
    return MIME_BY_SUFFIX.get(PurePath(name).suffix.lower())
