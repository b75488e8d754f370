"""`/v1/dead-letters`: a tenant's own dead letters (redacted) and the replay of one, once."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.domain.dead_letters import tenant_view
from engram_platform.problems import Problem

router = APIRouter(tags=["dead letters"])
LetterId = Annotated[str, Path(pattern=r"^\d{1,9}-\d{1,19}$")]


@router.get("/v1/dead-letters")
async def list_dead_letters(
    deps: Deps,
    caller: CallerDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> JSONResponse:
    """The caller's most recent dead letters, newest first: what failed, why and which item;
    never the message itself."""
    letters = await deps.dead_letters.read(caller.tenant_id)
    shown = [
        tenant_view(item.letter_id, item.letter, item.replayed_at is not None)
        for item in letters[:limit]
    ]
    return JSONResponse({"dead_letters": shown, "count": len(shown), "limit": limit})


@router.post("/v1/dead-letters/{letter_id}:replay", status_code=202)
async def replay_dead_letter(letter_id: LetterId, deps: Deps, caller: CallerDep) -> JSONResponse:
    """Send one of the caller's dead letters back to its topic; a letter replays only once."""
    result = (await deps.dead_letters.replay(caller.tenant_id, {letter_id}))[letter_id]
    if result == "not_found":
        raise Problem(404, detail="no such dead letter")
    if result == "already_replayed":
        raise Problem(409, "already-replayed", "the dead letter was already replayed")
    if result != "replayed":
        raise Problem(409, "not-replayable", "the dead letter's topic cannot be replayed")
    return JSONResponse({"letter_id": letter_id, "result": result}, status_code=202)
