"""Per-tenant rate limits on the public routes: a dependency charges, a middleware tells.

`limited` runs after authentication on every `/v1` route and charges the caller's bucket for
the route's class (a `memories:batch` costs one token per memory); over the limit it answers
429 `/problems/rate-limited`. `RateLimitHeaders` adds the IETF `RateLimit-Policy` and
`RateLimit` headers to every limited route's answer, and `Retry-After` to a 429.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps, GatewayDeps
from engram_gateway.domain.rate_limits import (
    BULK,
    Decision,
    Policy,
    limit_header,
    policy_header,
    route_class,
)
from engram_platform.problems import Problem

log = logging.getLogger(__name__)
STATE_KEY = "rate_limit"
MAX_BULK_COST = 100
"""The most memories one `:batch` may carry; a longer list is a 422 anyway."""


@dataclass(frozen=True)
class Charged:
    """What one request was charged under, for the headers of its answer."""

    name: str
    policy: Policy
    decision: Decision


async def _cost(request: Request, name: str) -> int:
    """Tokens a request costs: one, or one per memory of a batch (the body FastAPI parsed)."""
    if name != BULK:
        return 1
    try:
        body: Any = await request.json()
    except ValueError:
        return 1
    memories = body.get("memories") if isinstance(body, dict) else None
    return min(MAX_BULK_COST, len(memories)) if isinstance(memories, list) and memories else 1


async def limited(request: Request, deps: Deps, caller: CallerDep) -> None:
    """Charge the caller's tenant for this route's class; 429 when its bucket is short."""
    if not deps.settings.rate_limits_enabled:
        return
    name = route_class(request.method, getattr(request.scope.get("route"), "path", ""))
    if name is None:
        return
    charged = await charge(deps, caller.tenant_id, name, await _cost(request, name))
    request.state.rate_limit = charged
    refuse_if_spent(charged, caller.tenant_id)


async def charge(deps: GatewayDeps, tenant_id: str, name: str, cost: int) -> Charged:
    """Take `cost` tokens from the tenant's bucket for the class `name`, as far as it holds."""
    overrides = await deps.tenant_limits.overrides(tenant_id)
    policy, decision = deps.rate_limiter.charge(tenant_id, name, cost, overrides)
    return Charged(name, policy, decision)


def refuse_if_spent(charged: Charged, tenant_id: str) -> None:
    """The 429 `/problems/rate-limited` of a charge the bucket could not pay."""
    if charged.decision.allowed:
        return
    log.info("rate limited", extra={"tenant_id": tenant_id, "route_class": charged.name})
    raise Problem(
        429,
        "rate-limited",
        detail=f"the tenant's '{charged.name}' limit is spent; "
        f"retry after {charged.decision.retry_after} s",
    )


def headers(charged: Charged) -> list[tuple[bytes, bytes]]:
    """The headers an answer carries for the charge behind it."""
    found = [
        (b"ratelimit-policy", policy_header(charged.name, charged.policy).encode()),
        (b"ratelimit", limit_header(charged.name, charged.decision).encode()),
    ]
    if not charged.decision.allowed:
        found.append((b"retry-after", str(charged.decision.retry_after).encode()))
    return found


class RateLimitHeaders:
    """ASGI middleware: the rate-limit headers of whatever the route answered, 429s included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            charged = scope.get("state", {}).get(STATE_KEY)
            if message["type"] == "http.response.start" and isinstance(charged, Charged):
                message["headers"] = [*message.get("headers", []), *headers(charged)]
            await send(message)

        await self.app(scope, receive, sending)
