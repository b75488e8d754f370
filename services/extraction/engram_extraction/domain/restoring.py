"""An import's records, kept as the export held them: the source and drafts they become, under
ids derived from the target tenant and the exported record's id (pure)."""

from __future__ import annotations

from engram_events.payloads.records import RecordsRestoreRequested, RestoredRecord
from engram_extraction.domain.naming import content_hash, record_id
from engram_extraction.domain.records import Draft, Source, references_of
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.domain.validity import period_of


def restored_record_id(tenant_id: str, request: RecordsRestoreRequested, source_id: str) -> str:
    """The id a restored record gets: the same every run, distinct per source tenant."""
    key = f"restore\x1f{request.source_tenant}\x1f{source_id}"
    return record_id(tenant_id, request.source_item, "restored", key)


def restored(
    tenant_id: str, request: RecordsRestoreRequested, registry: SchemaRegistry
) -> tuple[Source, list[Draft]]:
    """The source item and its drafts; the content hash is recomputed, not trusted, and the
    references and valid period are read again by the target's type definitions (declared before
    any record is restored), as a source's own rows would be."""
    source = Source(
        tenant_id=tenant_id,
        source_item=request.source_item,
        default_type=request.default_type,
        document_id=request.document_id,
        document_version=request.document_version,
        source_item_id=request.source_item_id,
        model=request.model,
    )
    return source, [_draft(tenant_id, request, r, registry) for r in request.records]


def _draft(
    tenant_id: str, request: RecordsRestoreRequested, r: RestoredRecord, registry: SchemaRegistry
) -> Draft:
    declared = registry.declaration(r.record_type)
    schema = declared.schema if declared is not None else None
    attributes = dict(r.attributes)
    (valid_from, valid_to), problem = period_of(attributes, schema)
    return Draft(
        record_id=restored_record_id(tenant_id, request, r.source_record_id),
        record_type=r.record_type,
        entity_id=r.entity_id,
        attributes=attributes,
        content_sha256=content_hash(r.record_type, r.attributes),
        locator=r.locator,
        declared=declared,
        references=references_of(attributes, schema),
        valid_from=None if problem else valid_from,
        valid_to=None if problem else valid_to,
    )
