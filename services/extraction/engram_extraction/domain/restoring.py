"""An import's records, kept as the export held them: the source and drafts they become, under
ids derived from the target tenant and the exported record's id (pure)."""

from __future__ import annotations

from engram_events.payloads.records import RecordsRestoreRequested
from engram_extraction.domain.naming import content_hash, record_id
from engram_extraction.domain.records import Draft, Source


def restored_record_id(tenant_id: str, request: RecordsRestoreRequested, source_id: str) -> str:
    """The id a restored record gets: the same every run, distinct per source tenant."""
    key = f"restore\x1f{request.source_tenant}\x1f{source_id}"
    return record_id(tenant_id, request.source_item, "restored", key)


def restored(tenant_id: str, request: RecordsRestoreRequested) -> tuple[Source, list[Draft]]:
    """The source item and its drafts; the content hash is recomputed, not trusted."""
    source = Source(
        tenant_id=tenant_id,
        source_item=request.source_item,
        default_type=request.default_type,
        document_id=request.document_id,
        document_version=request.document_version,
        source_item_id=request.source_item_id,
        model=request.model,
    )
    drafts = [
        Draft(
            record_id=restored_record_id(tenant_id, request, r.source_record_id),
            record_type=r.record_type,
            entity_id=r.entity_id,
            attributes=dict(r.attributes),
            content_sha256=content_hash(r.record_type, r.attributes),
            locator=r.locator,
        )
        for r in request.records
    ]
    return source, drafts
