"""`GET /v1/audit`: the tenant's audit log for its admin keys, newest first: every memory
edit and expiry, fact edit, retention change, import, export and key action, with ids, counts
and hashes, never content."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.domain.access import ADMIN
from engram_gateway.domain.model import Caller
from engram_platform.audit import Action, AuditQuery, BadCursor, audit_time, decode_cursor
from engram_platform.problems import Problem

router = APIRouter(tags=["audit"])
MAX_LIMIT = 200


async def admin(caller: CallerDep) -> Caller:
    """The caller, when its key has the `admin` role: the log names every key's actions."""
    if ADMIN not in caller.roles:
        raise Problem(403, detail="the audit log needs a key with the 'admin' role")
    return caller


AdminDep = Annotated[Caller, Depends(admin)]


def _aware(name: str, moment: datetime | None) -> datetime | None:
    """A time bound as the log keeps times; it must say its timezone (a naive one would be
    read in an unknown zone) and lie within the years UTC can hold."""
    if moment is None:
        return None
    problem = "timezone required" if moment.tzinfo is None else None
    if problem is None:
        try:
            return audit_time(moment)
        except OverflowError:
            problem = "out of range in UTC"
    raise Problem(
        422,
        detail=f"{name}: {problem} (e.g. 2026-12-05T17:00:00Z)",
        errors=[{"loc": ["query", name], "msg": problem, "type": "invalid_time"}],
    )


@router.get("/v1/audit")
async def list_audit(
    deps: Deps,
    caller: AdminDep,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 50,
    cursor: Annotated[str | None, Query(min_length=1, max_length=512)] = None,
    action: Annotated[
        list[Action] | None, Query(description="only these actions (repeat to name several)")
    ] = None,
    since: Annotated[
        datetime | None, Query(description="entries at or after (ISO, with zone)")
    ] = None,
    until: Annotated[datetime | None, Query(description="entries before (ISO, with zone)")] = None,
    target: Annotated[
        str | None,
        Query(min_length=1, max_length=256, description="only entries naming this id"),
    ] = None,
) -> JSONResponse:
    """A page of the tenant's audit entries, newest first, and `next_cursor` for the next
    (null on the last page); 403 for a key without the `admin` role."""
    try:
        before = None if cursor is None else decode_cursor(cursor)
    except BadCursor as bad:
        raise Problem(422, detail=str(bad), errors=[{"loc": ["query", "cursor"]}]) from None
    query = AuditQuery(
        limit=limit,
        actions=tuple(dict.fromkeys(action or ())),
        since=_aware("since", since),
        until=_aware("until", until),
        target=target,
        before=before,
    )
    entries, next_cursor = await deps.audit.page(caller.tenant_id, query)
    body = {"entries": [entry.shown() for entry in entries], "next_cursor": next_cursor}
    return JSONResponse(body)
