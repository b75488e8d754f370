"""`/v1/records`: read records with revisions and lineage; import structured rows."""

from __future__ import annotations

import hashlib
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
)

from engram_events import new_event
from engram_events.catalog import RECORDS_IMPORT_REQUESTED
from engram_events.payloads.records import ImportRow, RecordsImportRequested
from engram_events.values import Text
from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps, GatewayDeps
from engram_platform.problems import Problem

router = APIRouter(tags=["records"])

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$"
RecordId = Annotated[str, Path(min_length=1, max_length=256, pattern=ID_PATTERN)]
IdFilter = Annotated[str | None, Query(min_length=1, max_length=256, pattern=ID_PATTERN)]
ImportId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")]
"""Starts alphanumeric, as extraction requires: `_x` would be its 422, not a missing import."""
MAX_IMPORT_BYTES = 8 * 1024 * 1024
MAX_ROWS = 10_000


class ImportRecords(BaseModel):
    """Structured rows of one type from one named source; values must be scalars."""

    model_config = ConfigDict(extra="forbid")

    record_type: str = Field(min_length=1, max_length=100, pattern=r"^[a-z][a-z0-9_]*$")
    source: Text = Field(min_length=1, max_length=200)
    rows: list[ImportRow] = Field(min_length=1, max_length=MAX_ROWS)
    key_field: Text | None = Field(default=None, min_length=1, max_length=200)
    idempotency_key: Text | None = Field(default=None, min_length=1, max_length=200)


class ImportAccepted(BaseModel):
    """What a 202 says: the import's id and where to watch it."""

    import_id: str
    status: str = "pending"
    status_url: str


def _import_id(tenant_id: str, idempotency_key: str | None) -> str:
    """Random, or stable per (tenant, idempotency key) so a retried request is one import."""
    if idempotency_key is None:
        return f"imp_{uuid.uuid4().hex[:24]}"
    digest = hashlib.sha256(f"{tenant_id}\x1f{idempotency_key}".encode()).hexdigest()
    return f"imp_{digest[:24]}"


async def _proxy(deps: GatewayDeps, tenant_id: str, path: str, **kwargs: Any) -> JSONResponse:
    """Ask extraction; its 404 and 422 pass through as problems, anything else is 503."""
    found = await deps.answers.json(
        "extraction", "GET", path, tenant_id=tenant_id, passed=(200, 404, 422), **kwargs
    )
    return JSONResponse(found)


@router.get("/v1/records/{record_id}")
async def get_record(record_id: RecordId, deps: Deps, caller: CallerDep) -> JSONResponse:
    """One record with its revisions (hashes, timestamps) and lineage to its source row."""
    return await _proxy(deps, caller.tenant_id, f"/internal/v1/records/{record_id}")


@router.get("/v1/records")
async def list_records(
    deps: Deps,
    caller: CallerDep,
    type: Annotated[str | None, Query(max_length=100, pattern=r"^[a-z][a-z0-9_]*$")] = None,
    document_id: IdFilter = None,
    entity_id: IdFilter = None,
    cursor: Annotated[str | None, Query(max_length=600)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> JSONResponse:
    """Records filtered by type, document or entity; `next_cursor` continues the listing."""
    given = {
        "type": type,
        "document_id": document_id,
        "entity_id": entity_id,
        "cursor": cursor,
        "limit": limit,
    }
    params = {k: v for k, v in given.items() if v is not None}
    return await _proxy(deps, caller.tenant_id, "/internal/v1/records", params=params)


@router.post(
    "/v1/records:import",
    status_code=202,
    response_model=ImportAccepted,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": ImportRecords.model_json_schema()}},
        }
    },
)
async def import_records(request: Request, deps: Deps, caller: CallerDep) -> JSONResponse:
    """Validate rows, publish `records.import_requested` (acks=all), then answer 202."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_IMPORT_BYTES:
        raise Problem(413, detail=f"imports are limited to {MAX_IMPORT_BYTES} bytes")
    if not request.headers.get("content-type", "").startswith("application/json"):
        raise Problem(415, detail="send application/json")
    body = await request.body()
    if len(body) > MAX_IMPORT_BYTES:
        raise Problem(413, detail=f"imports are limited to {MAX_IMPORT_BYTES} bytes")
    try:
        parsed = ImportRecords.model_validate_json(body)
    except ValidationError as exc:
        errors = [{"loc": [str(p) for p in e["loc"]], "msg": e["msg"]} for e in exc.errors()[:20]]
        raise Problem(422, detail="the import is not valid; see errors", errors=errors) from None
    import_id = _import_id(caller.tenant_id, parsed.idempotency_key)
    payload = RecordsImportRequested(
        import_id=import_id,
        source=parsed.source,
        record_type=parsed.record_type,
        rows=parsed.rows,
        key_field=parsed.key_field,
    )
    event = new_event(RECORDS_IMPORT_REQUESTED, payload, tenant_id=caller.tenant_id)
    await deps.intake.accept(
        event,
        "import",
        import_id,
        refused="the import could not be queued; retry",
        row_count=len(parsed.rows),
    )
    accepted = ImportAccepted(import_id=import_id, status_url=f"/v1/records:import/{import_id}")
    return JSONResponse(accepted.model_dump(), status_code=202)


@router.get("/v1/records:import/{import_id}")
async def get_import(import_id: ImportId, deps: Deps, caller: CallerDep) -> JSONResponse:
    """The import's outcome (extraction), or `pending` while only the gateway knows it."""
    view = await deps.owned.view_or_pending(
        caller.tenant_id,
        service="extraction",
        path=f"/internal/v1/imports/{import_id}",
        kind="import",
        item_id=import_id,
        pending={"import_id": import_id},
    )
    return JSONResponse(view)
