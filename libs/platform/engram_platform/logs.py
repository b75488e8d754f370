"""Structured JSON logs with trace ids, redacted so content never reaches them."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sys
import traceback
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

SENSITIVE_KEYS = frozenset(
    {"content", "text", "query", "body", "payload", "value", "document", "memory", "rows", "data"}
)
"""Extra fields that would carry user content; they are replaced by a hash and a length."""

_MAX_PLAIN = 128
_WHITESPACE = re.compile(r"\s")
"""Matches exactly what `str.isspace` accepts, at a tenth of a per-character scan's cost (every
span attribute and log argument passes here)."""
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


def fingerprint(value: object) -> str:
    """A stand-in for content: enough to correlate, nothing to read."""
    text = value if isinstance(value, str) else repr(value)
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
    return f"<redacted sha256:{digest} len={len(text)}>"


def _looks_like_content(value: object) -> bool:
    """Ids, counts and hashes have no spaces and are short; anything else may be content."""
    if not isinstance(value, str):
        return False
    return len(value) > _MAX_PLAIN or _WHITESPACE.search(value) is not None


class RedactionFilter(logging.Filter):
    """Replaces content-like message arguments and sensitive extra fields before formatting."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            record.args = tuple(fingerprint(a) if _looks_like_content(a) else a for a in args)
        for key in list(record.__dict__):
            if key in SENSITIVE_KEYS and key not in _STANDARD:
                record.__dict__[key] = fingerprint(record.__dict__[key])
        return True


def _exception_outline(exc_info: Any) -> list[str]:
    """Exception types and where they were raised, without messages (they may echo input)."""
    _, exc, tb = exc_info
    outline = [f"{type(exc).__module__}.{type(exc).__qualname__}"] if exc else []
    for frame in traceback.extract_tb(tb)[-6:]:
        outline.append(f"{frame.filename}:{frame.lineno} in {frame.name}")
    return outline


class JsonFormatter(logging.Formatter):
    """One JSON object per line with the active trace and span ids."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if _looks_like_content(message) and len(message) > 512:
            message = message[:512] + "…"
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "service": self.service,
            "logger": record.name,
            "msg": message,
        }
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            entry["trace_id"] = format(span.trace_id, "032x")
            entry["span_id"] = format(span.span_id, "016x")
        for key, val in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = val
        if record.exc_info:
            entry["exception"] = _exception_outline(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(service: str, level: str = "INFO", stream: Any = None) -> logging.Handler:
    """Route every logger through one redacting JSON handler on stderr."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter(service))
    handler.addFilter(RedactionFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_engram", False):
            root.removeHandler(old)
    handler._engram = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in ("aiokafka", "pymongo", "kafka", "httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    return handler
