"""Hot internal reads answered before FastAPI's request machinery, with the same answers.

FastAPI's stack around a small internal POST (its telemetry wrapper, middleware, router,
dependency solving, body and response handling) cost the memory service ~0.3 ms of CPU a call
against ~0.08 ms for the call itself: a tenth of its event loop at full write rate went to the
gateway's duplicate lookups. A lean route serves only a well-formed call: the internal token
right, a tenant named, no query string, a JSON body its model accepts and within its size.
Anything else goes to the app, whose route answers it as it always has (the 401, the 422 naming
the field or the parameter), so the two paths cannot disagree on a refusal. What the handler
raises is answered as the app's problem handlers would (`raised_problem`). A server span is made
for each call served here, named by the route's template, as FastAPI names its own.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from opentelemetry import propagate
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import SpanKind, TracerProvider
from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram_platform.internal import TENANT_HEADER, TOKEN_HEADER, token_matches
from engram_platform.problems import raised_problem

B = TypeVar("B", bound=BaseModel)
JSON_MEDIA = b"application/json"
HTTP_DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)
"""The HTTP semantic conventions' buckets, which FastAPI's histogram uses too, so dashboards add
the two paths' requests up."""


@dataclass
class Answered:
    """The status a request served outside FastAPI was answered with (0 until it is)."""

    status: int = 0


class ServerTelemetry:
    """What FastAPI's telemetry records of a request, for requests served before it: a server
    span continuing the caller's trace and `http.server.request.duration`, both named by the
    route's template, never by the path or the body."""

    def __init__(
        self, tracer_provider: TracerProvider, meter_provider: MeterProvider | None = None
    ) -> None:
        self.tracer = tracer_provider.get_tracer("engram.lean_routes")
        self.duration = (
            None
            if meter_provider is None
            else meter_provider.get_meter("engram.lean_routes").create_histogram(
                "http.server.request.duration",
                unit="s",
                description="Duration of HTTP server requests.",
                explicit_bucket_boundaries_advisory=HTTP_DURATION_BUCKETS,
            )
        )

    @contextmanager
    def request(self, scope: Scope, headers: dict[str, str], template: str) -> Iterator[Answered]:
        """Span and time one request; the caller notes the status it answered with."""
        started = time.perf_counter()
        method = str(scope["method"])
        attributes: dict[str, Any] = {"http.request.method": method, "http.route": template}
        answered = Answered()
        with self.tracer.start_as_current_span(
            f"{method} {template}",
            context=propagate.extract(headers),
            kind=SpanKind.SERVER,
            attributes=attributes,
        ) as span:
            try:
                yield answered
            finally:
                span.set_attribute("http.response.status_code", answered.status)
                if self.duration is not None:
                    recorded = {
                        **attributes,
                        "url.scheme": scope.get("scheme", "http"),
                        "http.response.status_code": answered.status,
                    }
                    if scope.get("http_version"):
                        recorded["network.protocol.version"] = scope["http_version"]
                    self.duration.record(time.perf_counter() - started, recorded)


@dataclass(frozen=True)
class LeanCall(Generic[B]):
    """A call that passed every check: the tenant the gateway named, the path's parameters, the
    validated body, and the app's state (where the composition root put what handlers use)."""

    tenant_id: str
    params: dict[str, str]
    body: B
    state: Any


@dataclass(frozen=True)
class LeanRoute:
    """A POST whose whole path matches `pattern` (its named groups are the parameters, as strict
    as the app route's), its body a `model`, answered by `handler` with JSON bytes; `template`
    is the app route's path, which names the span."""

    template: str
    pattern: re.Pattern[str]
    model: type[BaseModel]
    handler: Callable[[LeanCall[Any]], Awaitable[bytes]]
    max_body: int = 8 << 20


class LeanRoutes:
    """Serves the calls its routes match and pass; hands every other request to the app."""

    def __init__(
        self,
        routes: Sequence[LeanRoute],
        tracer_provider: TracerProvider,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self.routes = tuple(routes)
        self.telemetry = ServerTelemetry(tracer_provider, meter_provider)
        self.served = 0
        """Calls answered here (the tests tell the two paths apart by it)."""

    async def __call__(
        self, scope: Scope, receive: Receive, send: Send, app: ASGIApp, state: Any
    ) -> None:
        matched = matched_post(scope, self.routes)
        if matched is None:
            await app(scope, receive, send)
            return
        route, params = matched

        async def admit(headers: dict[str, str], body: bytes) -> LeanCall[Any] | None:
            return self._checked(headers, route, params, body, state)

        admitted = await admitted_or_passed(scope, receive, send, app, route.max_body, admit)
        if admitted is not None:
            self.served += 1
            call, headers = admitted
            await self._serve(scope, headers, route, call, send)

    @staticmethod
    def _checked(
        headers: dict[str, str], route: LeanRoute, params: dict[str, str], body: bytes, state: Any
    ) -> LeanCall[Any] | None:
        """The call, when the app would take it too; else None (the app answers it)."""
        tenant = headers.get(TENANT_HEADER, "")
        expected: str | None = getattr(state, "internal_token", None)
        media = headers.get("content-type", "").split(";", 1)[0].strip().encode()
        if not tenant or media != JSON_MEDIA:
            return None
        if not token_matches(headers.get(TOKEN_HEADER, ""), expected):
            return None
        try:
            model = route.model.model_validate_json(body)
        except ValidationError:
            return None
        return LeanCall(tenant, params, model, state)

    async def _serve(
        self,
        scope: Scope,
        headers: dict[str, str],
        route: LeanRoute,
        call: LeanCall[Any],
        send: Send,
    ) -> None:
        with self.telemetry.request(scope, headers, route.template) as answered:
            try:
                answer = await route.handler(call)
            except Exception as exc:
                problem = raised_problem(exc, scope["path"])
                answered.status = problem.status_code
                await problem(scope, nothing_to_read, send)
                return
            answered.status = 200
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", JSON_MEDIA),
                    (b"content-length", str(len(answer)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": answer})


class Matched(Protocol):
    """A lean route: the whole path it answers, its named groups the parameters."""

    @property
    def pattern(self) -> re.Pattern[str]: ...


M = TypeVar("M", bound=Matched)
A = TypeVar("A")


def matched_post(scope: Scope, routes: Sequence[M]) -> tuple[M, dict[str, str]] | None:
    """The route a POST with no query string is for, and its path's parameters; else None."""
    if scope["type"] != "http" or scope["method"] != "POST" or scope.get("query_string"):
        return None
    for route in routes:
        found = route.pattern.fullmatch(scope["path"])
        if found is not None:
            return route, found.groupdict()
    return None


async def admitted_or_passed(
    scope: Scope,
    receive: Receive,
    send: Send,
    app: ASGIApp,
    max_body: int,
    admit: Callable[[dict[str, str], bytes], Awaitable[A | None]],
) -> tuple[A, dict[str, str]] | None:
    """Read a matched request's body and return what `admit` makes of it, with the request's
    headers; a body over `max_body`, or one `admit` refuses (None), goes to `app` with what was
    read replayed, and None is returned."""
    body, complete = await read_body(receive, max_body)
    headers = header_map(scope)
    admitted = await admit(headers, body) if complete and len(body) <= max_body else None
    if admitted is None:
        await app(scope, replayed(body, complete, receive), send)
        return None
    return admitted, headers


def header_map(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (the last of a repeated one)."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}


async def read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The body as read, and whether that was all of it: reading stops once more than `limit`
    bytes came (a last chunk may take it over, so callers check the length too)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True
        if size > limit:
            return b"".join(chunks), False


def replayed(body: bytes, complete: bool, receive: Receive) -> Receive:
    """A receive that gives the app what was read first, then the rest of the request."""
    pending = [{"type": "http.request", "body": body, "more_body": not complete}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


async def nothing_to_read() -> Message:
    """A problem response reads nothing from the request."""
    return {"type": "http.disconnect"}
