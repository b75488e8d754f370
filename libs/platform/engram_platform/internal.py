"""Internal HTTP APIs: the gateway names the tenant; a shared token guards it when configured."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request

from engram_platform.problems import Problem

TENANT_HEADER = "x-engram-tenant"
TOKEN_HEADER = "x-engram-internal-token"


async def internal_tenant(request: Request) -> str:
    """The tenant the gateway resolved; every store query below must carry it."""
    expected = getattr(request.app.state, "internal_token", None)
    if expected and not hmac.compare_digest(request.headers.get(TOKEN_HEADER, ""), expected):
        raise Problem(401, detail="internal token missing or wrong")
    tenant = request.headers.get(TENANT_HEADER, "")
    if not tenant:
        raise Problem(400, detail=f"missing {TENANT_HEADER} header")
    return tenant


TenantDep = Annotated[str, Depends(internal_tenant)]
