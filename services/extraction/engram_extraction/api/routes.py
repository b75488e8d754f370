"""Extraction's internal routes: records, imports, and what a prune left live."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from engram_extraction.api.dependencies import Deps
from engram_extraction.api.views import record_view
from engram_extraction.domain.cursor import BadCursor, decode_cursor, encode_cursor
from engram_extraction.domain.heads import RecordHead
from engram_platform.internal import KNOWN_PATH, KnownIds, TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1", tags=["internal"])
IdPath = Annotated[
    str, Path(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$")
]
IdFilter = Annotated[
    str | None, Query(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$")
]


def _cursor_after(head: RecordHead) -> str:
    """The listing's cursor past a head; every stored head (markers too) keeps `updated_at`."""
    assert head.updated_at is not None, "a listed head is ordered by its updated_at"
    return encode_cursor(head.updated_at, head.record_id)


@router.get("/records/{record_id}")
async def get_record(record_id: IdPath, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """One of the tenant's records with its revisions (hashes and timestamps) and lineage."""
    head = await deps.records.record(tenant_id, record_id)
    if head is None:
        raise Problem(404, detail="no such record")
    return record_view(head)


@router.get("/records")
async def list_records(
    deps: Deps,
    tenant_id: TenantDep,
    type: Annotated[str | None, Query(max_length=100, pattern=r"^[a-z][a-z0-9_]*$")] = None,
    document_id: IdFilter = None,
    entity_id: IdFilter = None,
    cursor: Annotated[str | None, Query(max_length=600)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    """A page of the tenant's records in (updated_at, id) order, with the next cursor."""
    filters = {
        field: value
        for field, value in (
            ("record_type", type),
            ("document_id", document_id),
            ("entity_id", entity_id),
        )
        if value is not None
    }
    try:
        after = decode_cursor(cursor) if cursor else None
    except BadCursor as exc:
        raise Problem(422, "invalid-cursor", str(exc)) from None
    heads = await deps.records.list_records(
        tenant_id, filters=filters, after=after, limit=limit + 1
    )
    page = heads[:limit]
    next_cursor = _cursor_after(page[-1]) if len(heads) > limit else None
    return {"records": [record_view(h) for h in page], "next_cursor": next_cursor}


@router.get("/records:export")
async def export_records(
    deps: Deps,
    tenant_id: TenantDep,
    cursor: Annotated[str | None, Query(max_length=600)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 500,
) -> dict[str, Any]:
    """A page of every record head for a tenant export, each with the source item it belongs
    to (which the public view leaves out), in (updated_at, id) order."""
    try:
        after = decode_cursor(cursor) if cursor else None
    except BadCursor as exc:
        raise Problem(422, "invalid-cursor", str(exc)) from None
    heads = await deps.records.list_records(tenant_id, filters={}, after=after, limit=limit + 1)
    page = heads[:limit]
    next_cursor = _cursor_after(page[-1]) if len(heads) > limit else None
    records = [{**record_view(h), "source_item": h.source_item} for h in page]
    return {"records": records, "next_cursor": next_cursor}


@router.get("/imports/{import_id}")
async def get_import(import_id: IdPath, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """The outcome of one structured import."""
    status = await deps.records.import_status(tenant_id, import_id)
    if status is None:
        raise Problem(404, detail="no such import")
    return status


class VerifyBody(BaseModel):
    """The records a prune job tombstoned and the documents it deleted."""

    model_config = ConfigDict(extra="ignore")

    records: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
        default_factory=list, max_length=100_000
    )
    documents: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
        default_factory=list, max_length=1000
    )


@router.post("/prune/verify")
async def verify_prune(body: VerifyBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """How many of the tombstoned records are live again, and how many passages of the deleted
    documents are not withdrawn (0 everywhere means clean)."""
    live = await deps.records.live_among(tenant_id, body.records)
    passages = await deps.passages.live_passages_of(tenant_id, body.documents)
    return {"references": {"records": live, "passages": passages}}


@router.post(KNOWN_PATH.removeprefix("/internal/v1"))
async def known_records(body: KnownIds, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Which of the ids are the tenant's records (the gateway checks `derived_from`)."""
    return {"known": sorted(await deps.records.known(tenant_id, body.ids))}
