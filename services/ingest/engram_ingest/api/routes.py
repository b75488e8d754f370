"""Ingest's internal routes: a document's status, and what a prune left behind."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from engram_ingest.api.dependencies import Deps
from engram_ingest.api.views import document_view
from engram_platform.internal import KNOWN_PATH, KnownIds, TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1", tags=["internal"])


@router.get("/documents/{document_id}")
async def get_document(
    document_id: Annotated[str, Path(max_length=64)], deps: Deps, tenant_id: TenantDep
) -> dict[str, Any]:
    """Status, versions and extract log of one of the tenant's documents."""
    doc = await deps.documents.document(tenant_id, document_id)
    if doc is None:
        raise Problem(404, detail="no such document")
    return document_view(doc)


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


@router.post(KNOWN_PATH.removeprefix("/internal/v1"))
async def known_documents(body: KnownIds, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Which of the ids are the tenant's documents (the gateway checks `derived_from`)."""
    return {"known": sorted(await deps.documents.known(tenant_id, body.ids))}
