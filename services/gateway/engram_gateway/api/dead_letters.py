"""`/v1/dead-letters`: a tenant's own dead letters (redacted) and the replay of one, once."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps

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
    shown = await deps.dead_letters.page(caller.tenant_id, limit)
    return JSONResponse({"dead_letters": shown, "count": len(shown), "limit": limit})


@router.post("/v1/dead-letters/{letter_id}:replay", status_code=202)
async def replay_dead_letter(letter_id: LetterId, deps: Deps, caller: CallerDep) -> JSONResponse:
    """Send one of the caller's dead letters back to its topic; a letter replays only once."""
    result = await deps.dead_letters.replay_one(caller.tenant_id, letter_id)
    return JSONResponse({"letter_id": letter_id, "result": result}, status_code=202)
