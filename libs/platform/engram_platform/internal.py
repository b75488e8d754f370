"""Internal HTTP APIs: the gateway names the tenant; the shared token is always required."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from engram_events.ids import Id
from engram_platform.problems import Problem

TENANT_HEADER = "x-engram-tenant"
TOKEN_HEADER = "x-engram-internal-token"
KNOWN_PATH = "/internal/v1/known"
"""Where each owning service says which of some ids it holds for the tenant."""
UNSET = "internal-token-unset"
"""The problem type of a service that has no token: closed by default, never open."""


def token_matches(presented: str, expected: str | None) -> bool:
    """Constant-time, on bytes (a non-ASCII header must be a refusal, not a TypeError)."""
    if not expected:
        return False
    return hmac.compare_digest(presented.encode(), expected.encode())


async def internal_tenant(request: Request) -> str:
    """The tenant the gateway resolved; every store query below must carry it."""
    expected: str | None = getattr(request.app.state, "internal_token", None)
    if not expected:
        raise Problem(
            401,
            UNSET,
            detail="ENGRAM_INTERNAL_TOKEN is not set here, so every internal call is refused",
        )
    if not token_matches(request.headers.get(TOKEN_HEADER, ""), expected):
        raise Problem(401, detail="internal token missing or wrong")
    tenant = request.headers.get(TENANT_HEADER, "")
    if not tenant:
        raise Problem(400, detail=f"missing {TENANT_HEADER} header")
    return tenant


TenantDep = Annotated[str, Depends(internal_tenant)]


class KnownIds(BaseModel):
    """Ids the gateway asks an owner about before a write names them (one batch a request)."""

    model_config = ConfigDict(extra="forbid")

    ids: list[Id] = Field(max_length=20_000)
