"""`/v1/keys`: a tenant's admin keys issue, list, revoke and rotate the tenant's API keys.

A revoked key is refused by every gateway instance within a second (keys are remembered for
`ENGRAM_GATEWAY_KEY_CACHE_SECONDS`, under one). The tenant's last live admin key cannot be
revoked (409), so a tenant cannot lock itself out. Rotation revokes the old key at once; to
roll a key out without a gap, create the new one, deploy it, then revoke the old one.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.domain.access import ADMIN, IssuableRole, KeyView
from engram_gateway.domain.model import Caller
from engram_gateway.service.keys import NewKey
from engram_platform.problems import Problem

router = APIRouter(prefix="/v1/keys", tags=["keys"])
KeyId = Annotated[str, Path(pattern=r"^[0-9a-f]{16}$", description="the id in `egk_<id>_...`")]


class CreateKey(BaseModel):
    """A key to issue: `admin` also manages keys and may curate; `curator` also asserts and
    withdraws facts; `default` calls the data API only."""

    model_config = ConfigDict(extra="forbid")

    role: IssuableRole
    name: str | None = Field(default=None, min_length=1, max_length=128)


class RotateKey(BaseModel):
    """Rotation takes no options; the body may be omitted or empty."""

    model_config = ConfigDict(extra="forbid")


class IssuedKey(KeyView):
    """A new key: `key` is the plaintext, shown in this answer only."""

    key: str
    replaces: str | None = Field(default=None, description="the key a rotation revoked")


class KeyList(BaseModel):
    """The tenant's keys, revoked ones too, oldest first."""

    keys: list[KeyView]


async def admin(caller: CallerDep) -> Caller:
    """The caller, when its key has the `admin` role; 403 otherwise."""
    if ADMIN not in caller.roles:
        raise Problem(403, detail="managing keys needs a key with the 'admin' role")
    return caller


AdminDep = Annotated[Caller, Depends(admin)]


def _issued(new: NewKey, replaces: str | None = None) -> dict[str, Any]:
    shown = IssuedKey(key=new.plaintext, replaces=replaces, **new.view.model_dump())
    return shown.model_dump(mode="json")


@router.post("", status_code=201, response_model=IssuedKey)
async def create_key(body: CreateKey, deps: Deps, caller: AdminDep) -> JSONResponse:
    """Issue a key of the caller's tenant; its plaintext is in this answer only."""
    new = await deps.keys.create(caller.tenant_id, body.role, body.name)
    target = {"key_id": new.view.key_id, "role": new.view.role}
    await deps.audit.record(caller, "key.created", target, once_per=(new.view.key_id,))
    return JSONResponse(_issued(new), status_code=201)


@router.get("", response_model=KeyList)
async def list_keys(deps: Deps, caller: AdminDep) -> KeyList:
    """The tenant's keys: ids, prefixes, names, roles and times, never a secret or a hash."""
    return KeyList(keys=await deps.keys.list(caller.tenant_id))


@router.delete("/{key_id}", response_model=KeyView)
async def revoke_key(key_id: KeyId, deps: Deps, caller: AdminDep) -> KeyView:
    """Revoke a key (a revoked one answers unchanged); 409 for the tenant's last admin key."""
    revoked = await deps.keys.revoke(caller.tenant_id, key_id)
    await deps.audit.record(caller, "key.revoked", {"key_id": key_id}, once_per=(key_id,))
    return revoked


@router.post("/{key_id}:rotate", status_code=201, response_model=IssuedKey)
async def rotate_key(
    key_id: KeyId, deps: Deps, caller: AdminDep, body: RotateKey | None = None
) -> JSONResponse:
    """Issue a replacement with the same role and name and revoke this key at once."""

    async def audited(new: NewKey) -> None:
        target = {"key_id": key_id, "new_key_id": new.view.key_id, "role": new.view.role}
        await deps.audit.record(caller, "key.rotated", target, once_per=(new.view.key_id,))

    new = await deps.keys.rotate(caller.tenant_id, key_id, before_revoking=audited)
    return JSONResponse(_issued(new, replaces=key_id), status_code=201)
