"""Extraction's internal HTTP API, called by the gateway with the caller's tenant."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from engram_extraction.adapters.store import unpairs
from engram_extraction.domain.cursor import BadCursor, decode_cursor, encode_cursor
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1", tags=["internal"])
IdPath = Annotated[
    str, Path(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$")
]
IdFilter = Annotated[
    str | None, Query(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$")
]


def _lineage(stored: dict[str, Any] | None) -> dict[str, Any]:
    """Where a record came from; `model` (the id the endpoint reported) only for LLM rows."""
    stored = stored or {}
    lineage = {
        "document_id": stored.get("document_id"),
        "document_version": stored.get("document_version"),
        "locator": stored.get("locator", ""),
        "source_item_id": stored.get("source_item_id"),
    }
    if stored.get("model"):
        lineage["model"] = stored["model"]
    return lineage


def record_view(head: dict[str, Any]) -> dict[str, Any]:
    """A record as the API shows it: current content, lineage and (when read) its history."""
    view = {
        "record_id": head["record_id"],
        "record_type": head["record_type"],
        "entity_id": head["entity_id"],
        "status": head.get("status", "active"),
        "revision": head["revision"],
        "attributes": unpairs(head.get("attributes", [])),
        "content_sha256": head["content_sha256"],
        "lineage": _lineage(head.get("lineage")),
        "updated_at": head.get("updated_at"),
    }
    if "revisions" in head:
        view["revisions"] = [
            {
                "revision": r["revision"],
                "content_sha256": r["content_sha256"],
                "observed_at": r.get("observed_at"),
                "lineage": _lineage(r.get("lineage")),
            }
            for r in head["revisions"]
        ]
    return view


@router.get("/records/{record_id}")
async def get_record(record_id: IdPath, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """One of the tenant's records with its revisions (hashes and timestamps) and lineage."""
    head = await request.app.state.store.record(tenant_id, record_id)
    if head is None:
        raise Problem(404, detail="no such record")
    return record_view(head)


@router.get("/records")
async def list_records(
    request: Request,
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
    heads = await request.app.state.store.list_records(
        tenant_id, filters=filters, after=after, limit=limit + 1
    )
    page = heads[:limit]
    next_cursor = (
        encode_cursor(page[-1]["updated_at"], page[-1]["record_id"]) if len(heads) > limit else None
    )
    return {"records": [record_view(h) for h in page], "next_cursor": next_cursor}


@router.get("/imports/{import_id}")
async def get_import(import_id: IdPath, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """The outcome of one structured import."""
    status = await request.app.state.store.import_status(tenant_id, import_id)
    if status is None:
        raise Problem(404, detail="no such import")
    return status


class VerifyBody(BaseModel):
    """The records a prune job tombstoned."""

    model_config = ConfigDict(extra="ignore")

    records: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
        default_factory=list, max_length=100_000
    )


@router.post("/prune/verify")
async def verify_prune(body: VerifyBody, request: Request, tenant_id: TenantDep) -> dict[str, Any]:
    """How many of the tombstoned records are live again (0 means clean)."""
    live = await request.app.state.tombstones.live_among(tenant_id, body.records)
    return {"references": {"records": live}}
