"""Validating an uploaded document before anything is published."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from engram_events.mimes import (
    DOCUMENT_SIGNATURES,
    MIME_BY_SUFFIX,
    READABLE_MIMES,
    UNTYPED,
    mime_for_name,
    mismatch,
)

_NAME_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f/\\]")


class DocumentRejected(ValueError):
    """Why an upload was refused, with the HTTP status and problem type to answer with."""

    def __init__(self, status: int, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.kind = kind
        self.detail = detail


def check_name(name: str) -> str:
    """A plain file name: no directories, no traversal, no control characters."""
    normalized = unicodedata.normalize("NFC", name).strip()
    if not normalized or normalized in {".", ".."} or _NAME_FORBIDDEN.search(normalized):
        raise DocumentRejected(422, "invalid-document-name", "name must be a plain file name")
    return normalized


def resolve_mime(mime: str, name: str) -> str:
    """The declared type, or, when the client sent none or `application/octet-stream`, the
    type the file's extension names; an unknown extension is a 415 saying what to send."""
    declared = mime.split(";")[0].strip().lower()
    if declared not in UNTYPED:
        return declared
    named = mime_for_name(name)
    if named is None:
        raise DocumentRejected(
            415,
            "unsupported-media-type",
            f"{name!r} came without a type and its extension names none we read; use one of "
            f"{sorted(MIME_BY_SUFFIX)} or send the type (one of {sorted(READABLE_MIMES)}), "
            "e.g. curl -F 'file=@notes.txt;type=text/plain'",
        )
    return named


def check_content(content: bytes, mime: str, max_bytes: int) -> None:
    """Size, type and encoding checks on the bytes themselves: a PDF or a Word file must start
    as one, any other type must not start as a PDF, zip or other binary (the refusal says what
    the bytes are), text must be UTF-8."""
    if mime not in READABLE_MIMES:
        raise DocumentRejected(
            415, "unsupported-media-type", f"mime must be one of {sorted(READABLE_MIMES)}"
        )
    if len(content) > max_bytes:
        raise DocumentRejected(
            413, "payload-too-large", f"documents are limited to {max_bytes} bytes"
        )
    if not content.strip():
        raise DocumentRejected(422, "empty-document", "the document is empty")
    wrong = mismatch(content, mime)
    if wrong is not None:
        raise DocumentRejected(422, "content-mismatch", wrong)
    if mime in DOCUMENT_SIGNATURES:
        return
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentRejected(
            422, "invalid-encoding", f"text documents must be UTF-8 (invalid byte at {exc.start})"
        ) from None
    if b"\x00" in content:
        raise DocumentRejected(422, "binary-content", "the document contains NUL bytes")


def document_id(tenant_id: str, source: str, source_item_id: str) -> str:
    """Stable per source item, so a re-upload is a new version of the same document."""
    digest = hashlib.sha256(f"{tenant_id}\x1f{source}\x1f{source_item_id}".encode()).hexdigest()
    return f"doc_{digest[:24]}"
