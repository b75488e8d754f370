"""Listing pages: a stable (created_at, memory_id) order and an opaque cursor past a row."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from engram_memory.domain.rows import MemoryRow

Order = Literal["oldest", "recent"]


class BadCursor(ValueError):
    """A cursor this listing did not hand out (or one for another order)."""


@dataclass(frozen=True)
class Position:
    """The last row a page returned: the next page starts strictly after it."""

    created_at: datetime
    memory_id: str


def encode_cursor(row: MemoryRow, order: Order) -> str:
    """The cursor after a row: its place in the order, and the order itself."""
    body = {"c": row.created_at.isoformat(), "m": row.memory_id, "o": order}
    raw = json.dumps(body, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, order: Order) -> Position:
    """The position a cursor names; BadCursor when it is not one of ours for this order."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        body = json.loads(raw)
        position = Position(datetime.fromisoformat(body["c"]), str(body["m"]))
        given = body["o"]
    except (ValueError, KeyError, TypeError) as bad:
        raise BadCursor("the cursor is not one this listing returned") from bad
    if given != order:
        raise BadCursor(f"the cursor belongs to order={given}; pass the same order")
    if position.created_at.tzinfo is None:
        raise BadCursor("the cursor is not one this listing returned")
    return position
