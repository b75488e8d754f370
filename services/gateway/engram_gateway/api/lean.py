"""The hottest public routes served before FastAPI's request machinery, with the routes' answers.

A py-spy profile of the gateway under one POST per memory put ~40 % of its busy time in
FastAPI's stack around the route (its telemetry wrapper, six middlewares, two routers, ~11
dependencies, the body and the response) rather than in the write. A lean route serves only a
request its FastAPI route would accept: a POST to the exact path with no query string, a JSON
body within the cap that the route's model accepts, a valid key, an agent the tenant owns, and
whatever the route checks besides (`PublicRoute.admit`). Anything else, and any failure while
checking, goes to the app, which answers it as it always has (401, 404, 413, 422), so the two
paths cannot disagree on a refusal. A request that passed is charged to its tenant's bucket as
`rate_limits.limited` charges it and answered here: the route's answer, 429 when the bucket is
spent, the use case's problems as the app's handlers shape them, with the RateLimit headers, a
server span and `http.server.request.duration`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider
from pydantic import BaseModel
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram_gateway.api import rate_limits
from engram_gateway.api.dependencies import GatewayDeps
from engram_gateway.domain.model import Caller
from engram_platform.lean_routes import (
    ServerTelemetry,
    admitted_or_passed,
    matched_post,
    nothing_to_read,
)
from engram_platform.problems import raised_problem

JSON_MEDIA = "application/json"
AGENT_PATH = "/v1/agents/(?P<agent_id>[A-Za-z0-9_-]{1,64})"
"""An agent's routes' prefix, its id as strict as `AgentId`."""


@dataclass(frozen=True)
class Admitted:
    """A request that passed every check its route makes before it is charged."""

    deps: GatewayDeps
    caller: Caller
    agent_id: str
    body: Any


@dataclass(frozen=True)
class PublicRoute:
    """A public POST on an agent: its template (naming spans and metrics), the path it matches,
    the bucket it is charged to, its body's model, the checks it adds (raise to refuse: the app
    then answers) and its answer (raise a problem to answer one)."""

    template: str
    pattern: re.Pattern[str]
    route_class: str
    model: type[BaseModel]
    admit: Callable[[Admitted], Awaitable[None]]
    answer: Callable[[Admitted], Awaitable[Response]]


class LeanPublicRoutes:
    """Serves the requests its routes admit; hands every other request to the app."""

    def __init__(
        self,
        routes: Sequence[PublicRoute],
        tracer_provider: TracerProvider,
        meter_provider: MeterProvider | None = None,
        *,
        max_body: int,
    ) -> None:
        self.routes = tuple(routes)
        self.telemetry = ServerTelemetry(tracer_provider, meter_provider)
        self.max_body = max_body
        self.served = 0
        """Requests answered here (the tests tell the two paths apart by it)."""

    async def __call__(
        self, scope: Scope, receive: Receive, send: Send, app: ASGIApp, state: Any
    ) -> None:
        matched = matched_post(scope, self.routes)
        if matched is None:
            await app(scope, receive, send)
            return
        route, params = matched
        deps = getattr(state, "dependencies", None)

        async def admit(headers: dict[str, str], body: bytes) -> Admitted | None:
            return await _admitted(route, deps, headers, params["agent_id"], body)

        found = await admitted_or_passed(scope, receive, send, app, self.max_body, admit)
        if found is None:
            return
        self.served += 1
        admitted, headers = found
        with self.telemetry.request(scope, headers, route.template) as answered:
            response, charged = await _answer(route, admitted, scope["path"])
            answered.status = response.status_code
            await response(scope, nothing_to_read, _with_limits(send, charged))


async def _admitted(
    route: PublicRoute, deps: Any, headers: dict[str, str], agent_id: str, body: bytes
) -> Admitted | None:
    """The request, when its route would take it too; None (the app answers) on anything else."""
    if not isinstance(deps, GatewayDeps):
        return None
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if media != JSON_MEDIA or scheme.lower() != "bearer" or not token.strip():
        return None
    try:
        caller = await deps.registry.authenticate(token)
        if caller is None:
            return None
        admitted = Admitted(deps, caller, agent_id, route.model.model_validate(json.loads(body)))
        if await deps.registry.get_agent(caller.tenant_id, agent_id) is None:
            return None
        await route.admit(admitted)
    except Exception:
        return None
    await deps.keys.note_use(caller)
    return admitted


async def _answer(
    route: PublicRoute, admitted: Admitted, path: str
) -> tuple[Response, rate_limits.Charged | None]:
    """The route's answer to an admitted request, and the charge behind it (None: limits off)."""
    deps, tenant_id = admitted.deps, admitted.caller.tenant_id
    charged = None
    try:
        if deps.settings.rate_limits_enabled:
            charged = await rate_limits.charge(deps, tenant_id, route.route_class, 1)
            rate_limits.refuse_if_spent(charged, tenant_id)
        return await route.answer(admitted), charged
    except Exception as exc:
        return raised_problem(exc, path), charged


def _with_limits(send: Send, charged: rate_limits.Charged | None) -> Send:
    """A send that adds the charge's RateLimit headers to the answer, as the middleware does."""
    if charged is None:
        return send

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *rate_limits.headers(charged)]
        await send(message)

    return sending
