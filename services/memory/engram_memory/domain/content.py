"""Content checks on the memory text itself, before any embedding is paid for."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class ContentLimits:
    """Length bounds in characters, measured on the stripped content (never on an envelope)."""

    min_chars: int = 1
    max_chars: int = 8000


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
