"""An entity's stored form, pure: lists keyed inside (ids may hold dots), JSON values."""

from __future__ import annotations

from typing import Any

from engram_enrichment.domain.model import Entity

_KEYED = {
    "facts": "fact_id",
    "contradictions": "contradiction_id",
    "records": "record_id",
    "sections": "section_id",
}


def to_document(entity: Entity, dumped: dict[str, Any] | None = None) -> dict[str, Any]:
    """The stored form, with summary fields the listings read without loading facts.

    `dumped` is the entity's `model_dump(mode="json")` when the caller already has it.
    """
    doc = dict(dumped) if dumped is not None else entity.model_dump(mode="json")
    for name in _KEYED:
        doc[name] = [doc[name][key] for key in sorted(doc[name])]
    doc["fact_count"] = sum(1 for f in entity.facts.values() if f.status != "withdrawn")
    doc["open_contradictions"] = sum(
        1 for c in entity.contradictions.values() if c.status == "open"
    )
    return doc


def from_document(doc: dict[str, Any]) -> Entity:
    """Back to the aggregate; storage-only fields are ignored."""
    data = dict(doc)
    for name, key in _KEYED.items():
        data[name] = {item[key]: item for item in doc[name]}
    return Entity.model_validate(data)


def unconfirmed(intended: dict[str, Any], stored: dict[str, Any] | None) -> list[str]:
    """Each part of a write that did not read back as written, by id or field name."""
    if stored is None:
        stored = {}
    failed: list[str] = []
    for name, key in _KEYED.items():
        found = {item.get(key): item for item in stored.get(name, [])}
        failed += [item[key] for item in intended[name] if found.get(item[key]) != item]
    for field in ("version", "article", "entity_type", "summary"):
        if stored.get(field) != intended[field]:
            failed.append(field)
    return failed
