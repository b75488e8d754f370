"""A document's passages, in order, for the gateway's `GET /v1/documents/{id}/passages`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from engram_extraction.api.dependencies import Deps
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1/documents", tags=["internal"])
DocumentId = Annotated[
    str, Path(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$")
]
CITED = (
    "passage_id",
    "ordinal",
    "heading_path",
    "start",
    "end",
    "page",
    "page_end",
    "text",
    "text_sha256",
)


@router.get("/{document_id}/passages")
async def list_passages(
    document_id: DocumentId,
    deps: Deps,
    tenant_id: TenantDep,
    after: Annotated[int, Query(ge=-1)] = -1,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    """The current version's passages after an ordinal, in order, with the next cursor; 404
    when the document has none."""
    found = await deps.passages.current_passages(tenant_id, document_id, after, limit + 1)
    if found is None:
        raise Problem(404, detail="no passages for this document")
    version, rows = found
    page = rows[:limit]
    return {
        "document_id": document_id,
        "version": version,
        "name": page[0]["name"] if page else None,
        "passages": [{key: row.get(key) for key in CITED} for row in page],
        "next_after": page[-1]["ordinal"] if len(rows) > limit else None,
    }
