"""`/v1/prune` and `/v1/prune-jobs/{id}`: start a prune and watch it reach verified_empty."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from engram_events.payloads.prune import PruneSelector
from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.domain.prune import SELECTOR_PREVIEW
from engram_platform.problems import Problem

router = APIRouter(tags=["prune"])
JobId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
Id = Annotated[
    str, Field(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$")
]


class PruneFilter(BaseModel):
    """Scalar filters on records; combined with AND."""

    model_config = ConfigDict(extra="forbid")

    record_type: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=100)] | None = None
    document_id: Id | None = None
    status: Annotated[str, Field(pattern=r"^(active|rejected)$")] | None = None


class PruneRequest(BaseModel):
    """Exactly one selection: a retention age, explicit record ids, or a filter."""

    model_config = ConfigDict(extra="forbid")

    older_than_days: int | None = Field(default=None, ge=0, le=36_500)
    record_ids: list[Id] | None = Field(default=None, min_length=1, max_length=100_000)
    filter: PruneFilter | None = None

    @model_validator(mode="after")
    def _one_selection(self) -> PruneRequest:
        if self.older_than_days is None and not self.record_ids and self.filter is None:
            raise ValueError("give older_than_days, record_ids or filter")
        if self.record_ids and self.older_than_days is not None:
            raise ValueError("record_ids and older_than_days cannot be combined")
        return self

    def selector(self) -> PruneSelector:
        """The event's selector: the same filter is used to count and to delete."""
        extra: dict[str, Any] = self.filter.model_dump(exclude_none=True) if self.filter else {}
        try:
            return PruneSelector(
                older_than_days=self.older_than_days, record_ids=self.record_ids, **extra
            )
        except ValidationError:
            raise Problem(
                422,
                detail="a filter alone must name a document_id; add older_than_days or record_ids",
            ) from None


@router.post("/v1/prune", status_code=202)
async def start_prune(body: PruneRequest, deps: Deps, caller: CallerDep) -> JSONResponse:
    """Create a prune job; its progress is at the status URL."""
    job_id = await deps.prune.start(caller.tenant_id, "records", body.selector())
    return JSONResponse(
        {"prune_job_id": job_id, "status": "running", "status_url": f"/v1/prune-jobs/{job_id}"},
        status_code=202,
    )


@router.get("/v1/prune-jobs/{job_id}")
async def get_prune_job(
    job_id: JobId,
    deps: Deps,
    caller: CallerDep,
    selector: Annotated[
        Literal["preview", "full"],
        Query(
            description=f"`full` lists every selected id; `preview` (default) the first "
            f"{SELECTOR_PREVIEW} of each list"
        ),
    ] = "preview",
) -> dict[str, Any]:
    """Counts per stage, acknowledgements per service, and `verified_empty` once complete.

    A status poll of a 100k-record prune would otherwise carry its 100k ids every time."""
    return await deps.prune.describe(caller.tenant_id, job_id, full_selector=selector == "full")
