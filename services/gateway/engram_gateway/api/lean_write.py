"""Single memory writes served before FastAPI's request machinery, with the route's answers.

A py-spy profile of the gateway under one POST per memory put ~40 % of its busy time in
FastAPI's stack around the route (its telemetry wrapper, six middlewares, two routers, ~11
dependencies, the body and the response) rather than in the write. The lean write serves only
a write the route would accept: a POST to the exact path with no query string, a JSON body
within the cap that `WriteMemory` accepts and whose content the memory service would take, a
valid key, an agent the tenant owns, and sources that are the agent's. Anything else, and any
failure while checking, goes to the app, which answers it as it always has (401, 404, 413, 422),
so the two paths cannot disagree on a refusal. A write that passed is charged to its tenant's
write bucket as `rate_limits.limited` charges it and answered here: 202 or 200 as the route
answers, 429 when the bucket is spent, the use case's problems as the app's handlers shape
them, with the RateLimit headers, a server span and `http.server.request.duration`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from fastapi.responses import JSONResponse
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram_gateway.api import rate_limits
from engram_gateway.api.dependencies import GatewayDeps
from engram_gateway.api.memory_writes import (
    WriteMemory,
    check_content,
    outcome_answer,
    write_request,
)
from engram_gateway.domain.edits import author_of
from engram_gateway.domain.model import Caller
from engram_gateway.domain.rate_limits import WRITE
from engram_platform.lean_routes import (
    ServerTelemetry,
    header_map,
    nothing_to_read,
    read_body,
    replayed,
)
from engram_platform.problems import raised_problem

TEMPLATE = "/v1/agents/{agent_id}/memories"
PATH = re.compile(r"/v1/agents/(?P<agent_id>[A-Za-z0-9_-]{1,64})/memories")
"""The route's path, with its agent id as strict as `AgentId`."""
JSON_MEDIA = "application/json"


@dataclass(frozen=True)
class Admitted:
    """A write that passed every check the route makes before it is charged."""

    deps: GatewayDeps
    caller: Caller
    agent_id: str
    write: WriteMemory


class LeanMemoryWrite:
    """Serves the single writes it admits; hands every other request to the app."""

    def __init__(
        self,
        tracer_provider: TracerProvider,
        meter_provider: MeterProvider | None = None,
        *,
        max_body: int,
    ) -> None:
        self.telemetry = ServerTelemetry(tracer_provider, meter_provider)
        self.max_body = max_body
        self.served = 0
        """Writes answered here (the tests tell the two paths apart by it)."""

    async def __call__(
        self, scope: Scope, receive: Receive, send: Send, app: ASGIApp, state: Any
    ) -> None:
        agent_id = _agent_of(scope)
        if agent_id is None:
            await app(scope, receive, send)
            return
        body, complete = await read_body(receive, self.max_body)
        headers = header_map(scope)
        admitted = None
        if complete and len(body) <= self.max_body:
            admitted = await _admitted(
                getattr(state, "dependencies", None), headers, agent_id, body
            )
        if admitted is None:
            await app(scope, replayed(body, complete, receive), send)
            return
        self.served += 1
        with self.telemetry.request(scope, headers, TEMPLATE) as answered:
            response, charged = await _answer(admitted, scope["path"])
            answered.status = response.status_code
            await response(scope, nothing_to_read, _with_limits(send, charged))


def _agent_of(scope: Scope) -> str | None:
    """The agent id of a POST to the route's exact path with no query string, else None."""
    if scope["type"] != "http" or scope["method"] != "POST" or scope.get("query_string"):
        return None
    found = PATH.fullmatch(scope["path"])
    return None if found is None else found["agent_id"]


async def _admitted(
    deps: Any, headers: dict[str, str], agent_id: str, body: bytes
) -> Admitted | None:
    """The write, when the route would take it too; None (the app answers) on anything else."""
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
        write = WriteMemory.model_validate(json.loads(body))
        check_content([write], deps.settings.memory_limits, ["body"])
        if await deps.registry.get_agent(caller.tenant_id, agent_id) is None:
            return None
        await deps.sources.check(caller.tenant_id, agent_id, [write], ["body"])
    except Exception:
        return None
    await deps.keys.note_use(caller)
    return Admitted(deps, caller, agent_id, write)


async def _answer(admitted: Admitted, path: str) -> tuple[JSONResponse, rate_limits.Charged | None]:
    """The route's answer to an admitted write, and the charge behind it (None: limits off)."""
    deps, tenant_id = admitted.deps, admitted.caller.tenant_id
    charged = None
    try:
        if deps.settings.rate_limits_enabled:
            charged = await rate_limits.charge(deps, tenant_id, WRITE, 1)
            rate_limits.refuse_if_spent(charged, tenant_id)
        author = author_of(admitted.caller)
        event = write_request(tenant_id, admitted.agent_id, admitted.write, author)
        outcome = await deps.memory_writes.write(event)
    except Exception as exc:
        return raised_problem(exc, path), charged
    status = 200 if outcome.deduplicated else 202
    return JSONResponse(outcome_answer(admitted.agent_id, outcome), status_code=status), charged


def _with_limits(send: Send, charged: rate_limits.Charged | None) -> Send:
    """A send that adds the charge's RateLimit headers to the answer, as the middleware does."""
    if charged is None:
        return send

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *rate_limits.headers(charged)]
        await send(message)

    return sending
