"""Checking bytes before they are submitted: readable text, or a PDF, Word file or page whose
bytes are what its name says."""

from __future__ import annotations

from dataclasses import dataclass

from engram_events.mimes import DOCUMENT_SIGNATURES, mismatch


@dataclass(frozen=True)
class Rejection:
    """Why an item was refused: a stable reason code and a detail without content."""

    reason: str
    detail: str


def check_content(content: bytes, mime: str, *, max_bytes: int) -> Rejection | None:
    """None when the bytes are non-empty, within the size limit and of the type they travel as:
    a PDF or Word file that starts as one, an HTML page, or UTF-8 text without NUL bytes; bytes
    of another kind (a PDF named .docx) are refused saying what they are."""
    if not content:
        return Rejection("empty", "the file is empty")
    if len(content) > max_bytes:
        return Rejection("too_large", f"{len(content)} bytes exceeds the limit of {max_bytes}")
    if not content.strip():
        return Rejection("empty", "the file contains only whitespace")
    wrong = mismatch(content, mime)
    if wrong is not None:
        return Rejection("content_mismatch", wrong)
    if mime in DOCUMENT_SIGNATURES:
        return None
    if b"\x00" in content:
        return Rejection("binary", "the file contains NUL bytes; only text is accepted")
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection("invalid_utf8", f"not valid UTF-8 at byte {exc.start}")
    return None
