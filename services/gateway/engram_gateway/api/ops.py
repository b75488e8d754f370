"""`/ops`: the ops dashboard — pipeline, traces, lookup by id, prune jobs, DLQ with replay."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from engram_gateway.api.dependencies import Deps
from engram_gateway.api.ops_session import (
    authenticate,
    end_session,
    ops_caller,
    presented_key,
    same_origin,
    start_session,
)
from engram_gateway.domain.dead_letters import Letter
from engram_gateway.domain.model import Caller
from engram_gateway.domain.waterfall import summary, waterfall
from engram_platform.problems import Problem

HERE = Path(__file__).resolve().parent.parent / "ops"
"""The dashboard's templates and static assets."""
STATIC = {"ops.css": "text/css", "ops.js": "text/javascript"}
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]{0,255}$"
_INPUT_VALUE = re.compile(r"input_value=.*?(?=, input_type=|\]|$)", re.DOTALL)

router = APIRouter(tags=["ops"], include_in_schema=False)
templates = Jinja2Templates(directory=str(HERE / "templates"))
OpsDep = Annotated[Caller, Depends(ops_caller)]


def _page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, name, context, status_code=status)


def _safe_error(text: str) -> str:
    """Validation errors can echo input; the dashboard shows the reason, not the input."""
    return _INPUT_VALUE.sub("input_value=<redacted>", text)[:400]


@router.get("/ops/static/{name}")
async def static(name: str) -> FileResponse:
    """The dashboard's own CSS and JavaScript (no CDN, no data)."""
    if name not in STATIC:
        raise Problem(404, detail="no such asset")
    return FileResponse(HERE / "static" / name, media_type=STATIC[name])


@router.post("/ops/login")
async def login(
    request: Request, deps: Deps, api_key: Annotated[str, Form(max_length=512)] = ""
) -> Response:
    """Check the key once, then keep it in the HttpOnly session cookie."""
    same_origin(request)
    try:
        await authenticate(request, deps, api_key.strip())
    except Problem as exc:
        return _page(request, "login.html", exc.status, error=exc.detail)
    response = RedirectResponse("/ops", status_code=303)
    start_session(response, request, api_key.strip())
    return response


@router.post("/ops/logout")
async def logout(request: Request) -> Response:
    """Drop the session cookie."""
    response = RedirectResponse("/ops", status_code=303)
    end_session(response)
    return response


@router.get("/ops")
async def dashboard(
    request: Request,
    deps: Deps,
    replay: Annotated[str | None, Query(pattern=r"^\d{1,9}-of-\d{1,9}$")] = None,
) -> Response:
    """The login form without a session; else the pipeline, traces, prune jobs and DLQ.

    `replay` is what the replay form's redirect reports (`3-of-4`), shown above the DLQ."""
    if not presented_key(request):
        return _page(request, "login.html", 401, error=None)
    try:
        caller = await ops_caller(request, deps)
    except Problem as exc:
        return _page(request, "login.html", exc.status, error=exc.detail)
    shown = await deps.ops.overview(caller.tenant_id)
    return _page(
        request,
        "dashboard.html",
        tenant_id=caller.tenant_id,
        picture=shown.picture,
        window_minutes=shown.window_minutes,
        traces=shown.traces,
        jobs=shown.jobs,
        letters=[_letter_view(item) for item in shown.letters],
        consumers=shown.consumers,
        replay_result=replay,
    )


@router.get("/ops/traces/{trace_id}")
async def trace_page(request: Request, deps: Deps, caller: OpsDep, trace_id: str) -> HTMLResponse:
    """One trace as a waterfall; an id that names none of the tenant's traces (or is not a trace
    id at all) finds the lookup page, answered 404."""
    spans = await deps.ops.trace(caller.tenant_id, trace_id)
    if not spans:
        return _page(request, "lookup.html", 404, query=trace_id, traces=[])
    return _page(
        request,
        "trace.html",
        trace=summary(spans),
        rows=waterfall(spans),
        tenant_id=caller.tenant_id,
    )


@router.get("/ops/lookup")
async def lookup(
    request: Request,
    deps: Deps,
    caller: OpsDep,
    id: Annotated[str, Query(min_length=1, max_length=256, pattern=ID_PATTERN)],
) -> Response:
    """A document, record, memory, prune-job or trace id opens its trace (or lists several)."""
    trace_ids, traces = await deps.ops.lookup(caller.tenant_id, id)
    if len(trace_ids) == 1:
        return RedirectResponse(f"/ops/traces/{trace_ids[0]}", status_code=303)
    return _page(request, "lookup.html", 200 if traces else 404, query=id, traces=traces)


@router.get("/ops/prune-jobs/{job_id}")
async def prune_job(deps: Deps, caller: OpsDep, job_id: str) -> JSONResponse:
    """A job's stage-by-stage progress (the tenant's own jobs only)."""
    described = await deps.prune.describe(caller.tenant_id, job_id)
    return JSONResponse(described)


@router.get("/ops/dlq")
async def dead_letters(deps: Deps, caller: OpsDep) -> list[dict[str, Any]]:
    """The tenant's dead letters as JSON (what the DLQ table shows)."""
    return [_letter_view(item) for item in await deps.dead_letters.read(caller.tenant_id)]


@router.post("/ops/dlq/replay")
async def replay(
    request: Request,
    deps: Deps,
    caller: OpsDep,
    letter_id: Annotated[str | None, Form(pattern=r"^\d+-\d+$")] = None,
    consumer: Annotated[str | None, Form(pattern=r"^[a-z][a-z0-9_-]{0,63}$")] = None,
) -> Response:
    """Replay one letter, or every not-yet-replayed letter of one consumer."""
    same_origin(request)
    office = deps.dead_letters
    if letter_id:
        results = await office.replay_many(caller.tenant_id, {letter_id})
    elif consumer:
        results = await office.replay_consumer(caller.tenant_id, consumer)
    else:
        raise Problem(422, detail="give letter_id or consumer")
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse({"results": results})
    replayed = sum(1 for r in results.values() if r == "replayed")
    return RedirectResponse(f"/ops?replay={replayed}-of-{len(results)}#dlq", status_code=303)


def _letter_view(item: Letter) -> dict[str, Any]:
    letter = item.letter
    return {
        "letter_id": item.letter_id,
        "consumer": letter.consumer,
        "topic": letter.topic,
        "event_type": letter.event_type,
        "event_id": letter.event_id,
        "key": letter.key,
        "error_type": letter.error_type,
        "error": _safe_error(letter.error),
        "attempts": letter.attempts,
        "failed_at": letter.failed_at.isoformat(),
        "replayed_at": item.replayed_at.isoformat() if item.replayed_at else None,
    }
