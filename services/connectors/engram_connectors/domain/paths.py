"""Path safety for the drop folder: only plain names, never anything outside the folder."""

from __future__ import annotations

import re
import unicodedata

RESERVED = frozenset({"processed", "failed"})
"""Top-level sub-folders the watcher owns; files in them are never picked up."""

MAX_RELATIVE_PATH = 1024
_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\\]")
ERROR_SUFFIX = ".error.json"


def is_ignored_name(name: str) -> bool:
    """Hidden and temporary files are skipped: editors and uploaders write through them."""
    return name.startswith(".") or name.startswith("~") or name.endswith((".tmp", ".part"))


def safe_relative_path(relative: str) -> str | None:
    """The normalised relative path, or None when it could name anything outside the folder."""
    if not relative or len(relative) > MAX_RELATIVE_PATH or _FORBIDDEN.search(relative):
        return None
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        return None
    parts = unicodedata.normalize("NFC", relative).split("/")
    if any(part in {"", ".", ".."} for part in parts) or parts[0] in RESERVED:
        return None
    return "/".join(parts)


def is_within(folder: str, candidate: str) -> bool:
    """True when a resolved path lies strictly inside a resolved folder."""
    base = folder.rstrip("/") + "/"
    return candidate.startswith(base)
