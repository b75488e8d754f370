"""`/v1/schema/types`: the record types a tenant's documents and imports are extracted with.

The bundled file's types apply to every tenant; `PUT` declares the tenant's own version of a
type (replacing the bundled one by name), `DELETE` retires it so the bundled one, if any,
applies again. Each change is a new version, kept; it applies to sources extracted after it,
and records name the version they were built with (`lineage.type_definition`). Extraction owns
the types and validates a definition with the model it builds records with, so a field added to
that model is accepted here unchanged. Changes need the `admin` role.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query
from fastapi.responses import JSONResponse

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps, GatewayDeps
from engram_gateway.domain.access import may_declare_types
from engram_gateway.domain.model import Caller
from engram_platform.problems import Problem

router = APIRouter(prefix="/v1/schema/types", tags=["schema"])
TypeName = Annotated[
    str,
    Path(
        min_length=1,
        max_length=100,
        pattern=r"^[a-z][a-z0-9_]*$",
        description="a record type: lower-case letters, digits and `_`, starting with a letter",
    ),
]
PASSED = (200, 404, 409, 422)
DEFINITION_EXAMPLE = {
    "id_fields": ["order_id"],
    "required_fields": ["order_id", "customer"],
    "single_valued": ["status", "customer"],
}


async def _extraction(
    deps: GatewayDeps, caller: Caller, method: str, path: str, **kwargs: Any
) -> JSONResponse:
    """Ask extraction; its 404, 409 and 422 pass through as problems, anything else is 503."""
    found = await deps.answers.json(
        "extraction",
        method,
        f"/internal/v1/schema/types{path}",
        tenant_id=caller.tenant_id,
        passed=PASSED,
        **kwargs,
    )
    return JSONResponse(found)


def _admin(caller: Caller) -> None:
    if not may_declare_types(caller.roles):
        raise Problem(403, detail="changing record types needs a key with the 'admin' role")


@router.get("")
async def list_types(deps: Deps, caller: CallerDep) -> JSONResponse:
    """Every record type in force for the tenant, by name, each with `origin` `bundled` (the
    service's file) or `tenant` (declared here) and its version."""
    return await _extraction(deps, caller, "GET", "")


@router.get("/{name}")
async def get_type(
    name: TypeName,
    deps: Deps,
    caller: CallerDep,
    version: Annotated[int | None, Query(ge=1, le=1_000_000_000)] = None,
) -> JSONResponse:
    """The definition in force (the tenant's current version, else the bundled one), or with
    `version` the tenant's version of that number (a retired one shows `retired: true`)."""
    params = {"version": version} if version is not None else None
    return await _extraction(deps, caller, "GET", f"/{name}", params=params)


@router.get("/{name}/versions")
async def type_versions(name: TypeName, deps: Deps, caller: CallerDep) -> JSONResponse:
    """Every version the tenant declared of the type, oldest first, and the bundled one."""
    return await _extraction(deps, caller, "GET", f"/{name}/versions")


@router.put("/{name}")
async def put_type(
    name: TypeName,
    deps: Deps,
    caller: CallerDep,
    body: Annotated[
        dict[str, Any],
        Body(
            description=(
                "the definition: `id_fields` (the entity key, each also required), "
                "`required_fields`, `single_valued` (exactly the attributes holding one "
                "value; absent, enrichment's schema decides), `references` (fields naming "
                "another entity's key: `{field, to, predicate, many?, separator?}`, each a "
                "relation); `name` may be omitted or must match the path"
            ),
            examples=[DEFINITION_EXAMPLE],
        ),
    ],
) -> JSONResponse:
    """Declare the tenant's next version of the type; sources extracted from now on use it.
    422 naming each bad field, 403 without the `admin` role, 409 when a concurrent change won."""
    _admin(caller)
    return await _extraction(
        deps, caller, "PUT", f"/{name}", json=body, params={"changed_by": caller.key_id}
    )


@router.delete("/{name}")
async def delete_type(name: TypeName, deps: Deps, caller: CallerDep) -> JSONResponse:
    """Retire the tenant's definition (its versions are kept): the bundled type, if any,
    applies again to sources extracted from now on. 404 when the tenant declares no such type."""
    _admin(caller)
    return await _extraction(
        deps, caller, "DELETE", f"/{name}", params={"changed_by": caller.key_id}
    )
