"""Ingest's internal routes: a document's status, and what a prune left behind."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from engram_ingest.api.dependencies import Deps
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1", tags=["internal"])


def _status(doc: dict[str, Any]) -> str:
    """The document's status as the public API reports it."""
    if doc.get("status") == "deleted":
        return "deleted"
    latest = doc.get("extract_log", {}).get(doc.get("latest_version"), {})
    return str(latest.get("status", "pending"))


@router.get("/documents/{document_id}")
async def get_document(
    document_id: Annotated[str, Path(max_length=64)], deps: Deps, tenant_id: TenantDep
) -> dict[str, Any]:
    """Status, versions and extract log of one of the tenant's documents."""
    doc = await deps.documents.document(tenant_id, document_id)
    if doc is None:
        raise Problem(404, detail="no such document")
    latest = doc["extract_log"].get(doc.get("latest_version"), {})
    return {
        "document_id": document_id,
        "name": doc.get("name"),
        "mime": doc.get("mime"),
        "source": doc.get("source"),
        "status": _status(doc),
        "latest_version": doc.get("latest_version"),
        "record_count": latest.get("record_count", 0),
        "rejected_count": latest.get("rejected_count", 0),
        "attempts": latest.get("attempts", 0),
        "error": latest.get("last_error"),
        "versions": [
            {
                "version": v,
                "status": row.get("status"),
                "attempts": row.get("attempts", 0),
                "last_error": row.get("last_error"),
                "record_count": row.get("record_count", 0),
                "created_at": row.get("created_at"),
                "updated_at": row.get("updated_at"),
            }
            for v, row in doc["extract_log"].items()
        ],
        "created_at": doc.get("created_at"),
        "updated_at": doc.get("updated_at"),
    }


class VerifyBody(BaseModel):
    """The documents a prune job tombstoned."""

    model_config = ConfigDict(extra="ignore")

    documents: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
        default_factory=list, max_length=10_000
    )


@router.post("/prune/verify")
async def verify_prune(body: VerifyBody, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Documents not marked deleted, and raw content still kept for deleted ones (0 is clean)."""
    live, blobs = await deps.documents.remaining(tenant_id, body.documents)
    return {"references": {"documents": live, "blobs": blobs}}
