"""Record types per tenant, for the gateway's `/v1/schema/types`: the types in force, one type
(or one of its versions, or all of them), a new version, and retiring the tenant's own."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query

from engram_extraction.api.dependencies import Deps
from engram_extraction.domain.types import BadDefinition
from engram_extraction.service.types import TypeConflict
from engram_platform.internal import TenantDep
from engram_platform.problems import Problem

router = APIRouter(prefix="/internal/v1/schema/types", tags=["internal"])
TypeName = Annotated[str, Path(min_length=1, max_length=100, pattern=r"^[a-z][a-z0-9_]*$")]
ChangedBy = Annotated[str | None, Query(min_length=1, max_length=64)]


@router.get("")
async def list_types(deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """Every type in force for the tenant, each marked `bundled` or `tenant`."""
    return {"types": await deps.types.listing(tenant_id)}


@router.get("/{name}")
async def get_type(
    name: TypeName,
    deps: Deps,
    tenant_id: TenantDep,
    version: Annotated[int | None, Query(ge=1)] = None,
) -> dict[str, Any]:
    """The definition in force, or the tenant's `version` of it."""
    found = await deps.types.get(tenant_id, name, version)
    if found is None:
        raise Problem(404, detail="no such record type" if version is None else "no such version")
    return found


@router.get("/{name}/versions")
async def type_versions(name: TypeName, deps: Deps, tenant_id: TenantDep) -> dict[str, Any]:
    """The tenant's versions of the type, oldest first, and the bundled definition."""
    found = await deps.types.versions(tenant_id, name)
    if found is None:
        raise Problem(404, detail="no such record type")
    return found


@router.put("/{name}")
async def put_type(
    name: TypeName,
    deps: Deps,
    tenant_id: TenantDep,
    body: Annotated[Any, Body()] = None,
    changed_by: ChangedBy = None,
) -> dict[str, Any]:
    """The body becomes the tenant's next version of the type; 422 naming each bad field."""
    try:
        return await deps.types.declare(tenant_id, name, body, changed_by)
    except BadDefinition as exc:
        raise Problem(
            422, detail="the type definition is not valid; see errors", errors=exc.errors
        ) from None
    except TypeConflict:
        raise Problem(409, detail="the type changed meanwhile; read it and retry") from None


@router.delete("/{name}")
async def delete_type(
    name: TypeName, deps: Deps, tenant_id: TenantDep, changed_by: ChangedBy = None
) -> dict[str, Any]:
    """Retire the tenant's definition (kept in its versions); the bundled one applies again."""
    try:
        found = await deps.types.retire(tenant_id, name, changed_by)
    except TypeConflict:
        raise Problem(409, detail="the type changed meanwhile; read it and retry") from None
    if found is None:
        raise Problem(404, detail="the tenant declares no such record type")
    return found
