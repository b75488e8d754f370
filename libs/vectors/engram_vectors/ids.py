"""Caller ids are strings; Qdrant engines want UUIDs, so map them deterministically."""

from __future__ import annotations

import uuid

from engram_vectors.errors import InvalidPoint

ENGRAM_ID_NAMESPACE = uuid.UUID("6f0b7a52-3c1e-5b8e-9a4d-2e1f0c9d8b7a")
ORIGINAL_ID_KEY = "_engram_id"
"""Payload key under which the caller's own id is stored, so hits return it unchanged."""
RESERVED_PAYLOAD_PREFIX = "_engram"
RESERVED_STRING_PREFIX = "\x00engram:"
"""Payload and filter strings starting with this are refused: the edge adapter stores values of
its own under it (booleans, which it cannot match otherwise; see edge_payload.py)."""
MAX_ID_LENGTH = 512


def check_id(point_id: object) -> str:
    """A non-empty string id of bounded length."""
    if not isinstance(point_id, str) or not point_id or len(point_id) > MAX_ID_LENGTH:
        raise InvalidPoint(f"point ids must be non-empty strings of at most {MAX_ID_LENGTH} chars")
    return point_id


def engine_id(point_id: str) -> uuid.UUID:
    """A canonical UUID string maps to itself; any other id to its uuid5 in Engram's namespace."""
    check_id(point_id)
    try:
        parsed = uuid.UUID(point_id)
    except ValueError:
        return uuid.uuid5(ENGRAM_ID_NAMESPACE, point_id)
    return parsed if str(parsed) == point_id else uuid.uuid5(ENGRAM_ID_NAMESPACE, point_id)
