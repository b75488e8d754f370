"""Records in their stored form: heads, history rows, rejects, markers and packed manifests.

Attributes are stored as a list of {k, v} (names may hold dots or `$`, which field names
cannot); a manifest is one compressed blob (a 20k-row document's manifest as a 20k-key object
cost the database most of a second per write).
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import bson

from engram_events.ids import Scalar
from engram_events.values import value_problem
from engram_extraction.domain.heads import RecordHead, RecordRevision
from engram_extraction.domain.records import Draft, Rejection, Source
from engram_extraction.domain.revisions import Change, Entry
from engram_extraction.domain.tombstones import Marker

HEAD_FIELDS = tuple(
    field.name
    for field in dataclasses.fields(RecordHead)
    if field.name not in ("attributes", "revisions")
)


def pairs(attributes: dict[str, Scalar]) -> list[dict[str, Scalar]]:
    """Attributes as a list of {k, v}: names may hold dots or `$`, which field names cannot."""
    return [{"k": k, "v": v} for k, v in attributes.items()]


def storable(attributes: dict[str, Scalar]) -> dict[str, Scalar]:
    """A rejected row's attributes less those storage could not keep or send back as given."""
    return {
        k: v for k, v in attributes.items() if value_problem(k) is None and value_problem(v) is None
    }


def unpairs(stored: list[dict[str, Any]]) -> dict[str, Scalar]:
    """The inverse of `pairs`, keeping the source's attribute order."""
    return {item["k"]: item["v"] for item in stored}


def pack_manifest(entries: dict[str, Entry]) -> bson.Binary:
    """A manifest's entries as one compressed BSON blob."""
    encoded = bson.encode({rid: entry.encode() for rid, entry in entries.items()})
    return bson.Binary(zlib.compress(encoded, 1))


def unpack_manifest(doc: dict[str, Any] | None) -> dict[str, Entry]:
    """A stored manifest's entries by record id (none when the source asserted nothing yet)."""
    if doc is None:
        return {}
    entries: dict[str, str] = bson.decode(zlib.decompress(bytes(doc["packed"])))
    return {rid: Entry.decode(raw) for rid, raw in entries.items()}


def lineage(source: Source, draft: Draft) -> dict[str, Any]:
    """Where a row came from; `model` only when the LLM extractor read it, `passage_ids` only
    when it cites passages, `edit` only for a curator's, `type_definition` (origin and
    version) only when its type is declared."""
    found: dict[str, Any] = {
        "document_id": source.document_id,
        "document_version": source.document_version,
        "locator": draft.locator,
        "source_item_id": source.source_item_id,
    }
    if source.model is not None:
        found["model"] = source.model
    if draft.passage_ids:
        found["passage_ids"] = list(draft.passage_ids)
    if source.edit is not None:
        found["edit"] = source.edit.model_dump()
    if draft.declared is not None:
        found["type_definition"] = {
            "origin": draft.declared.origin,
            "version": draft.declared.version,
        }
    return found


def head_doc(tenant_id: str, source: Source, change: Change, at: datetime) -> dict[str, Any]:
    """A record's current head: content, revision and lineage."""
    draft = change.draft
    return {
        "_id": f"{tenant_id}:{draft.record_id}",
        "tenant_id": tenant_id,
        "record_id": draft.record_id,
        "record_type": draft.record_type,
        "entity_id": draft.entity_id,
        "source_item": source.source_item,
        "document_id": source.document_id,
        "status": "active",
        "revision": change.revision,
        "attributes": pairs(draft.attributes),
        "content_sha256": draft.content_sha256,
        "lineage": lineage(source, draft),
        "updated_at": at,
    }


def revision_doc(tenant_id: str, source: Source, change: Change, at: datetime) -> dict[str, Any]:
    """History keeps hashes and where they came from, never the content itself."""
    draft = change.draft
    return {
        "_id": f"{tenant_id}:{draft.record_id}:{change.revision}",
        "tenant_id": tenant_id,
        "record_id": draft.record_id,
        "revision": change.revision,
        "content_sha256": draft.content_sha256,
        "lineage": lineage(source, draft),
        "observed_at": at,
    }


def rejected_doc(
    tenant_id: str, source: Source, cause: str, rejected: Rejection, at: datetime
) -> dict[str, Any]:
    """An invalid row with its reason, once per source version."""
    return {
        "_id": f"{tenant_id}:{source.source_item}:{cause}:{rejected.locator}",
        "tenant_id": tenant_id,
        "source_item": source.source_item,
        "document_id": source.document_id,
        "document_version": source.document_version,
        "locator": rejected.locator,
        "reason": rejected.reason,
        "attributes": pairs(storable(rejected.attributes)),
        "rejected_at": at,
    }


def record_head(
    doc: Mapping[str, Any], revisions: Sequence[Mapping[str, Any]] | None = None
) -> RecordHead:
    """A stored head as the service reads it: attributes by name (a marker has none) and, when
    given, its history rows."""
    fields = {name: doc[name] for name in HEAD_FIELDS if doc.get(name) is not None}
    fields["attributes"] = unpairs(doc.get("attributes") or [])
    if revisions is not None:
        fields["revisions"] = tuple(
            RecordRevision(
                revision=r["revision"],
                content_sha256=r["content_sha256"],
                observed_at=r.get("observed_at"),
                lineage=r.get("lineage"),
            )
            for r in revisions
        )
    return RecordHead(**fields)


def marker_doc(tenant_id: str, head: RecordHead, marker: Marker) -> dict[str, Any]:
    """A head as a tombstone marker: ids, last revision and hash kept, content dropped."""
    return {
        "_id": f"{tenant_id}:{head.record_id}",
        "tenant_id": tenant_id,
        "record_id": head.record_id,
        "record_type": head.record_type,
        "entity_id": head.entity_id,
        "source_item": head.source_item,
        "document_id": head.document_id,
        "status": "tombstoned",
        "revision": head.revision,
        "content_sha256": head.content_sha256,
        "lineage": head.lineage,
        "updated_at": head.updated_at,
        **dataclasses.asdict(marker),
    }
