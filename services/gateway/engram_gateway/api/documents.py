"""`/v1/documents`: accept uploads (JSON or multipart) and report their status."""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from engram_events import new_event
from engram_events.catalog import DOCUMENT_SUBMITTED
from engram_events.payloads.documents import DocumentSubmitted, Name
from engram_events.values import Text
from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.domain.documents import (
    DocumentRejected,
    check_content,
    check_name,
    document_id,
    resolve_mime,
)
from engram_platform.problems import Problem

router = APIRouter(prefix="/v1/documents", tags=["documents"])
DocumentId = Annotated[
    str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
]
"""Starts with a letter or digit, as every id the events carry (`engram_events.ids.Id`): the
owners refuse anything else, which answered `-` with a 503 instead of a 422 at the door."""


class SubmitDocument(BaseModel):
    """A document as JSON: text or base64 bytes, with its name and type. Its source is always
    `gateway` (connectors name themselves); there is no field for it, so a `source` sent is a
    422 rather than a label silently dropped."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    mime: Text = Field(min_length=3, max_length=127)
    text: Text | None = None
    content_base64: str | None = None

    @model_validator(mode="after")
    def _one_body(self) -> SubmitDocument:
        if (self.text is None) == (self.content_base64 is None):
            raise ValueError("give exactly one of text or content_base64")
        return self


class Accepted(BaseModel):
    """What a 202 says: the id and where to watch it."""

    document_id: str
    version: str
    status: str = "pending"
    status_url: str


def max_request_bytes(max_document_bytes: int) -> int:
    """A document's request may carry it base64-encoded plus its name and form fields."""
    return max_document_bytes * 4 // 3 + 65536


REQUEST_BODY = {
    "required": True,
    "content": {
        "application/json": {"schema": SubmitDocument.model_json_schema()},
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "name": {"type": "string"},
                    "mime": {"type": "string"},
                },
            }
        },
    },
}
"""The body is parsed by hand (JSON or multipart), so the schema is declared here for clients."""


async def _parse(request: Request) -> tuple[str, str, bytes]:
    """Name, mime and bytes from either JSON or a multipart `file` field."""
    ctype = request.headers.get("content-type", "")
    if ctype.startswith("multipart/form-data"):
        form = await request.form()
        upload: Any = form.get("file")
        if upload is None or isinstance(upload, str):
            raise Problem(422, "validation-error", "multipart uploads need a 'file' field")
        content = await upload.read()
        mime = str(form.get("mime") or upload.content_type or "")
        return str(form.get("name") or upload.filename or ""), mime, content
    if not ctype.startswith("application/json"):
        raise Problem(415, detail="send application/json or multipart/form-data")
    try:
        body = SubmitDocument.model_validate_json(await request.body())
    except ValidationError as exc:
        errors = [{"loc": [str(p) for p in e["loc"]], "msg": e["msg"]} for e in exc.errors()[:20]]
        raise Problem(422, detail="the document is not valid; see errors", errors=errors) from None
    if body.text is not None:
        return body.name, body.mime, body.text.encode("utf-8")
    try:
        return body.name, body.mime, base64.b64decode(body.content_base64 or "", validate=True)
    except (binascii.Error, ValueError):
        raise Problem(422, "invalid-base64", "content_base64 is not valid base64") from None


@router.post(
    "", status_code=202, response_model=Accepted, openapi_extra={"requestBody": REQUEST_BODY}
)
async def submit_document(request: Request, deps: Deps, caller: CallerDep) -> JSONResponse:
    """Validate, publish `document.submitted` (acks=all), then answer 202."""
    max_bytes = deps.settings.max_document_bytes
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_request_bytes(max_bytes):
        raise Problem(413, detail=f"documents are limited to {max_bytes} bytes")
    name, mime, content = await _parse(request)
    try:
        name = check_name(name)
        mime = resolve_mime(mime, name)
        check_content(content, mime, max_bytes)
    except DocumentRejected as exc:
        raise Problem(exc.status, exc.kind, exc.detail) from None
    sha = hashlib.sha256(content).hexdigest()
    doc_id = document_id(caller.tenant_id, "gateway", name)
    payload = DocumentSubmitted(
        document_id=doc_id,
        version=sha[:16],
        source="gateway",
        source_item_id=name,
        name=name,
        mime=mime,
        content_sha256=sha,
        size_bytes=len(content),
        content_base64=base64.b64encode(content).decode(),
        submitted_by=caller.key_id,
    )
    event = new_event(DOCUMENT_SUBMITTED, payload, tenant_id=caller.tenant_id)
    await deps.intake.accept(
        event,
        "document",
        doc_id,
        refused="the document could not be queued; retry",
        size_bytes=len(content),
        version=payload.version,
        name_sha256=hashlib.sha256(name.encode()).hexdigest(),
    )
    accepted = Accepted(
        document_id=doc_id, version=payload.version, status_url=f"/v1/documents/{doc_id}"
    )
    return JSONResponse(accepted.model_dump(), status_code=202)


@router.get("/{doc_id}")
async def get_document(doc_id: DocumentId, deps: Deps, caller: CallerDep) -> JSONResponse:
    """The owner's view (ingest); `pending` while only the gateway knows the submission."""
    view = await deps.owned.view_or_pending(
        caller.tenant_id,
        service="ingest",
        path=f"/internal/v1/documents/{doc_id}",
        kind="document",
        item_id=doc_id,
        pending={"document_id": doc_id},
        with_version=True,
    )
    return JSONResponse(view)


@router.get("/{doc_id}/passages")
async def list_passages(
    doc_id: DocumentId,
    deps: Deps,
    caller: CallerDep,
    after: Annotated[int, Query(ge=-1)] = -1,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> JSONResponse:
    """The current version's passages in order, each with its heading path, page and span in
    the extracted text (extraction's); `next_after` pages on. 404 when it has none (yet)."""
    passages = await deps.answers.json(
        "extraction",
        "GET",
        f"/internal/v1/documents/{doc_id}/passages",
        tenant_id=caller.tenant_id,
        passed=(200, 404),
        params={"after": after, "limit": limit},
    )
    return JSONResponse(passages)


@router.delete("/{doc_id}", status_code=202)
async def delete_document(doc_id: DocumentId, deps: Deps, caller: CallerDep) -> JSONResponse:
    """Tombstone a document and everything derived from it; returns the prune job to watch.
    The tenant's document quota gets it back, with its last version's bytes."""
    job_id = await deps.document_deletion.delete(caller.tenant_id, doc_id)
    return JSONResponse(
        {"prune_job_id": job_id, "status": "running", "status_url": f"/v1/prune-jobs/{job_id}"},
        status_code=202,
    )
