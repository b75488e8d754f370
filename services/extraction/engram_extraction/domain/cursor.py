"""Opaque `(timestamp, id)` page cursors: equal timestamps are ordered by id, never skipped."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime


class BadCursor(ValueError):
    """The cursor was not issued by this API."""


def encode_cursor(at: datetime, record_id: str) -> str:
    """The position after one item: its timestamp (ms, as stored) and its id."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    raw = json.dumps([at.isoformat(timespec="milliseconds"), record_id], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The (timestamp, id) pair, or BadCursor."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        at, record_id = json.loads(raw)
        if not isinstance(at, str) or not isinstance(record_id, str) or not record_id:
            raise BadCursor("cursor is malformed")
        moment = datetime.fromisoformat(at)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
        raise BadCursor("cursor is malformed") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)), record_id
