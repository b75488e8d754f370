"""Deterministic ids, so a replay lands on the same fact and contradiction."""

from __future__ import annotations

import hashlib
import json
import re

from engram_events.ids import Scalar

_SAFE_ATTRIBUTE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_ID = 256


def value_sha256(value: Scalar) -> str:
    """The hash of a value with its JSON type, so 12, 12.5, "12" and true stay distinct."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def attribute_token(attribute: str) -> str:
    """The attribute itself when it is id-safe, else a short hash of it."""
    if _SAFE_ATTRIBUTE.match(attribute):
        return attribute
    return "a" + hashlib.sha256(attribute.encode()).hexdigest()[:16]


def fact_id(entity_id: str, attribute: str, value: Scalar) -> str:
    """`entity:attribute:value-hash`; hashed down when it would outgrow an id."""
    return fact_id_of(entity_id, attribute, value_sha256(value))


def fact_id_of(entity_id: str, attribute: str, digest: str) -> str:
    """`fact_id` from the value's `value_sha256`, for callers that keep the hash too."""
    candidate = f"{entity_id}:{attribute_token(attribute)}:{digest[:16]}"
    if len(candidate) <= MAX_ID:
        return candidate
    digest = hashlib.sha256(candidate.encode()).hexdigest()[:32]
    return f"f{digest}"


def contradiction_id(entity_id: str, attribute: str, cause: str) -> str:
    """One id per (entity, attribute, opening cause): a re-run of the cause reopens nothing new."""
    digest = hashlib.sha256(f"{entity_id}\x00{attribute}\x00{cause}".encode()).hexdigest()
    return f"ctr_{digest[:24]}"
