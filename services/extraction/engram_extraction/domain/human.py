"""A curator's edit as a record of source `human`: one record per (entity, attribute, key), so
the key's next edit of that attribute revises it, and every edit is a new revision."""

from __future__ import annotations

from engram_events.payloads.records import FactEditRequested
from engram_extraction.domain.naming import (
    FALLBACK_TYPE,
    canonical_json,
    content_hash,
    record_id,
    short_hash,
    type_name,
)
from engram_extraction.domain.records import Draft, Source

HUMAN = "human"
"""The source of every curator's record (its source item is `human:<hash>`)."""


def type_of(entity_id: str) -> str:
    """The record type an entity id names (`carrier:c1` → `carrier`)."""
    prefix, sep, _ = entity_id.partition(":")
    return type_name(prefix) if sep and prefix else FALLBACK_TYPE


def human_record(tenant_id: str, request: FactEditRequested) -> tuple[Source, Draft]:
    """The source and the draft of one edit; its hash covers the action, reason and time, so
    re-asserting the same value with a new reason is a new revision too."""
    edit = request.edit
    rtype = type_of(request.entity_id)
    key = f"{request.entity_id}\x1f{request.attribute}\x1f{edit.key_id}"
    source = Source(
        tenant_id=tenant_id,
        source_item=f"{HUMAN}:{short_hash(key)}",
        default_type=rtype,
        source_item_id=edit.key_id,
        forced_type=rtype,
        edit=edit,
    )
    attributes = {request.attribute: request.value}
    stamp = canonical_json(edit.model_dump(mode="json"))
    digest = content_hash(rtype, {**attributes, f"\x1f{HUMAN}": stamp})
    draft = Draft(
        record_id=record_id(tenant_id, HUMAN, rtype, key),
        record_type=rtype,
        entity_id=request.entity_id,
        attributes=attributes,
        content_sha256=digest,
        locator=f"{edit.action} by key {edit.key_id}",
    )
    return source, draft
