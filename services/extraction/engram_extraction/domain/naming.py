"""Deterministic names: record types, entity keys, record ids and content hashes."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

from engram_events.ids import Scalar

_NOT_NAME = re.compile(r"[^a-z0-9]+")
_SAFE_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]{0,149}$")
FALLBACK_TYPE = "record"


def singular(word: str) -> str:
    """English plural to singular for the common cases (`carriers` → `carrier`)."""
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if len(word) > 1 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def type_name(raw: str, *, singularise: bool = False) -> str:
    """A valid record type (`^[a-z][a-z0-9_]*$`, ≤100 chars) from any label."""
    name = _NOT_NAME.sub("_", raw.strip().lower()).strip("_")
    if singularise and name:
        parts = name.split("_")
        name = "_".join([*parts[:-1], singular(parts[-1])])
    if not name:
        return FALLBACK_TYPE
    if not name[0].isalpha():
        name = f"r_{name}"
    return name[:100]


def type_from_file_name(file_name: str) -> str:
    """A document's default record type: its file-name stem, singular."""
    stem = file_name.rsplit("/", 1)[-1]
    stem = stem.split(".", 1)[0] if not stem.startswith(".") else stem.lstrip(".")
    return type_name(stem, singularise=True)


def canonical_json(attributes: Mapping[str, Scalar]) -> str:
    """The one serialisation hashes are taken over: sorted keys, no whitespace."""
    return json.dumps(attributes, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(record_type: str, attributes: Mapping[str, Scalar]) -> str:
    """SHA-256 over the type and the canonical attributes."""
    return hashlib.sha256(f"{record_type}\x1f{canonical_json(attributes)}".encode()).hexdigest()


def entity_key(raw: Scalar) -> str:
    """A key usable inside an id; other keys are replaced by a stable hash of themselves."""
    text = str(raw).strip()
    if _SAFE_KEY.match(text):
        return text
    return "h" + hashlib.sha256(text.encode()).hexdigest()[:31]


def entity_id(record_type: str, key: str) -> str:
    """The entity this record asserts about: `{type}:{key}` (e.g. `carrier:c1`)."""
    return f"{record_type}:{key}"


def record_id(tenant_id: str, source_item: str, record_type: str, key: str) -> str:
    """One source's assertion about one entity: stable across versions of that source."""
    material = "\x1f".join((tenant_id, source_item, record_type, key))
    return "rec_" + hashlib.sha256(material.encode()).hexdigest()[:32]


def short_hash(text: str) -> str:
    """A compact fingerprint for bookkeeping (never for content addressing)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]
