"""Who may see /ops: a key with the `ops` role, by bearer header or the login cookie.

A browser cannot send a bearer header when it navigates, so the login form posts the key
once and the gateway sets it in an HttpOnly, SameSite=Strict cookie scoped to /ops (8 hours).
Every request re-authenticates the key against the store, so revoking the key or removing
its role ends the session at once. The key never appears in a URL, a log line or a span.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import Request, Response

from engram_gateway.api.dependencies import Deps, GatewayDeps
from engram_gateway.domain.model import Caller
from engram_platform.problems import Problem

OPS_ROLE = "ops"
COOKIE = "engram_ops"
COOKIE_PATH = "/ops"
SESSION_SECONDS = 8 * 3600


def presented_key(request: Request) -> str | None:
    """The bearer key, else the session cookie's key."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return request.cookies.get(COOKIE) or None


async def authenticate(request: Request, deps: GatewayDeps, key: str | None) -> Caller:
    """The ops caller for a key: 401 without a valid key, 403 without the ops role."""
    if not key:
        raise Problem(401, detail="log in at /ops or send 'Authorization: Bearer <ops key>'")
    caller = await deps.registry.authenticate(key)
    if caller is None:
        raise Problem(401, detail="the API key is not valid")
    if OPS_ROLE not in caller.roles:
        raise Problem(403, detail="this key has no 'ops' role")
    request.state.tenant_id = caller.tenant_id
    return caller


async def ops_caller(request: Request, deps: Deps) -> Caller:
    """Dependency for every /ops route."""
    return await authenticate(request, deps, presented_key(request))


def same_origin(request: Request) -> None:
    """State-changing posts must come from the dashboard itself (on top of SameSite=Strict)."""
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise Problem(403, detail="cross-origin request refused")


def start_session(response: Response, request: Request, key: str) -> None:
    """Set the HttpOnly cookie holding the key."""
    response.set_cookie(
        COOKIE,
        key,
        max_age=SESSION_SECONDS,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def end_session(response: Response) -> None:
    """Forget the cookie."""
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")
