"""Booleans stored as tagged strings, because qdrant-edge 0.9 cannot match a stored boolean.

The binding sends `MatchValue(True)` as the integer 1 (so it matches stored 1s, never stored
booleans), `MatchExcept` likewise, and a bool payload index does not help. So the edge adapter
writes every boolean in a payload, at any depth, as one of two strings under the reserved prefix,
turns a boolean condition into a match on that string, and turns the strings back into booleans
on every read. Payload strings under the prefix are refused on write (checks.py), so no caller's
value can pass for one.
"""

from __future__ import annotations

from typing import Any

from engram_vectors.ids import RESERVED_STRING_PREFIX
from engram_vectors.models import Payload

TRUE_TOKEN = f"{RESERVED_STRING_PREFIX}bool:true"
FALSE_TOKEN = f"{RESERVED_STRING_PREFIX}bool:false"
_DECODED = {TRUE_TOKEN: True, FALSE_TOKEN: False}


def bool_token(value: bool) -> str:
    """The string a boolean is stored as."""
    return TRUE_TOKEN if value else FALSE_TOKEN


def _encode(value: Any) -> Any:
    if isinstance(value, bool):
        return bool_token(value)
    if isinstance(value, list):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        return {key: _encode(item) for key, item in value.items()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, str):
        return _DECODED.get(value, value)
    if isinstance(value, list):
        return [_decode(item) for item in value]
    if isinstance(value, dict):
        return {key: _decode(item) for key, item in value.items()}
    return value


def encode_payload(payload: Payload) -> Payload:
    """A copy of a checked payload with its booleans as tokens, for writing to the engine."""
    return {key: _encode(value) for key, value in payload.items()}


def decode_payload(stored: Payload | None) -> Payload:
    """A payload read from the engine with its tokens back as booleans."""
    return {key: _decode(value) for key, value in (stored or {}).items()}
