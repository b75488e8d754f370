"""The document types extraction reads, the file extensions that name them, and what a file's
first bytes say it is: one table for the gateway (which types an upload sent without one), the
connectors, extraction and the client."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class Signature:
    """What a file's first bytes say it is, and the type and extension it is read as (none for
    kinds Engram does not read)."""

    magic: bytes
    name: str
    mime: str | None = None
    suffix: str | None = None
    hint: str = "Engram does not read it"


SIGNATURES = (
    Signature(b"%PDF-", "a PDF", "application/pdf", ".pdf"),
    Signature(
        b"PK\x03\x04", "a zip archive (as a Word .docx file is)", MIME_BY_SUFFIX[".docx"], ".docx"
    ),
    Signature(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
        "a legacy Office file (.doc or .xls)",
        hint="save it as .docx or PDF",
    ),
    Signature(b"\x89PNG\r\n\x1a\n", "a PNG image"),
    Signature(b"\xff\xd8\xff", "a JPEG image"),
    Signature(b"GIF8", "a GIF image"),
    Signature(b"\x1f\x8b", "a gzip archive"),
)
KIND_NAMES = {
    "application/pdf": "a PDF",
    MIME_BY_SUFFIX[".docx"]: "a Word (.docx) file",
}


def sniff(content: bytes) -> Signature | None:
    """The kind of file the first bytes name, or None when they name none (text, HTML)."""
    return next((s for s in SIGNATURES if content.startswith(s.magic)), None)


def describe(content: bytes) -> str:
    """What the bytes are, in words a user can act on (never any of the content)."""
    found = sniff(content)
    if found is not None:
        return found.name
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return "binary data"
    return "UTF-8 text"


def mismatch(content: bytes, mime: str) -> str | None:
    """Why the bytes are not the type they were sent as, or None when they may be: a PDF or Word
    type must start as one, any other type must not start as a PDF, zip or other known binary."""
    expected = DOCUMENT_SIGNATURES.get(mime, ())
    found = sniff(content)
    if expected and content.startswith(expected):
        return None
    if not expected and found is None:
        return None
    claimed = KIND_NAMES.get(mime, mime)
    what = f"the content is {describe(content)}, not {claimed}"
    if found is None:
        text = what.endswith("UTF-8 text, not " + claimed)
        return f"{what}; send it as text/plain or name it .txt" if text else what
    if found.mime is not None:
        return f"{what}; send it as {found.mime} or name it {found.suffix}"
    return f"{what}; {found.hint}"
