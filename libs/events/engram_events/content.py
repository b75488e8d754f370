"""What a memory's content may be: checked by the gateway at the door and by the memory
service before any embedding is paid for, with the same limits (one setting)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

DEFAULT_MAX_CHARS = 8000
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ContentLimits:
    """Length bounds in characters, measured on the content itself (never on an envelope)."""

    min_chars: int = 1
    max_chars: int = DEFAULT_MAX_CHARS


PROBLEMS = {
    "not_text": "must be a string",
    "empty": "must not be empty",
    "whitespace": "must contain a non-whitespace character",
    "too_short": "is shorter than the minimum length",
    "too_long": "is longer than the maximum length",
}
"""Each reason `content_problem` can give, as a sentence for an error message."""


def content_problem(content: object, limits: ContentLimits) -> str | None:
    """Why this content cannot become a memory, or None when it can."""
    if not isinstance(content, str):
        return "not_text"
    if not content:
        return "empty"
    stripped = content.strip()
    if not stripped:
        return "whitespace"
    if len(stripped) < limits.min_chars:
        return "too_short"
    if len(content) > limits.max_chars:
        return "too_long"
    return None


def content_sha256(content: str) -> str:
    """The hash rows keep after the content itself is gone."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def normalized_content(content: str) -> str:
    """Content as dedup compares it: NFKC, case-folded, runs of whitespace as one space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", content).casefold()).strip()


def normalized_sha256(content: str) -> str:
    """The hash two writes share when they say the same thing up to case and spacing."""
    return content_sha256(normalized_content(content))
