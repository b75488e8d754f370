"""Checking bytes before they are submitted: the pipeline only takes readable text."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rejection:
    """Why an item was refused: a stable reason code and a detail without content."""

    reason: str
    detail: str


def check_content(content: bytes, *, max_bytes: int) -> Rejection | None:
    """None when the bytes are non-empty UTF-8 text within the size limit."""
    if not content:
        return Rejection("empty", "the file is empty")
    if len(content) > max_bytes:
        return Rejection("too_large", f"{len(content)} bytes exceeds the limit of {max_bytes}")
    if b"\x00" in content:
        return Rejection("binary", "the file contains NUL bytes; only text is accepted")
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection("invalid_utf8", f"not valid UTF-8 at byte {exc.start}")
    if not text.strip():
        return Rejection("empty", "the file contains only whitespace")
    return None
