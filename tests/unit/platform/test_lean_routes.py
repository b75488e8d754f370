"""A lean route answers a clean call exactly as the app's route would, and hands every other
call to the app, so refusals (401, 400, 422 naming the field or the parameter) stay the app's."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Annotated, Any

import pytest
from fastapi import APIRouter, Path
from fastapi.responses import Response
from fastapi.testclient import TestClient
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pymongo.errors import ConnectionFailure
from starlette.types import Receive, Scope, Send

from engram_platform.app import ServiceApp, service_app
from engram_platform.internal import TENANT_HEADER, TOKEN_HEADER, TenantDep
from engram_platform.lean_routes import LeanCall, LeanRoute, LeanRoutes
from engram_platform.problems import Problem
from engram_platform.runtime import Runtime
from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit
TOKEN = "s3cret"
HEADERS = {TENANT_HEADER: "t1", TOKEN_HEADER: TOKEN}
TRACE = "0af7651916cd43dd8448eb211c80319c"


class Echo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    word: str = Field(min_length=1, max_length=10)


async def echoed(tenant_id: str, agent_id: str, body: Echo) -> bytes:
    """The one answer both paths give; a word asks for a failure instead."""
    if body.word == "conflict":
        raise Problem(409, "echo-conflict", "the word is taken", word_id="w1")
    if body.word == "down":
        raise ConnectionFailure("no database")
    return f'{{"tenant":"{tenant_id}","agent":"{agent_id}","word":"{body.word}"}}'.encode()


router = APIRouter()


@router.post("/internal/v1/agents/{agent_id}/echo", response_model=None)
async def echo(
    agent_id: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]+$", max_length=64)],
    body: Echo,
    tenant_id: TenantDep,
) -> Response:
    return Response(await echoed(tenant_id, agent_id, body), media_type="application/json")


async def lean_echo(call: LeanCall[Echo]) -> bytes:
    return await echoed(call.tenant_id, call.params["agent_id"], call.body)


ECHO = LeanRoute(
    template="/internal/v1/agents/{agent_id}/echo",
    pattern=re.compile(r"/internal/v1/agents/(?P<agent_id>[A-Za-z0-9_-]{1,64})/echo"),
    model=Echo,
    handler=lean_echo,
    max_body=64,
)


async def nothing(*_: object) -> None:
    return None


def app(lean: bool) -> ServiceApp:
    settings = ServiceSettings(
        internal_token=SecretStr(TOKEN), tracing_enabled=False, metrics_enabled=False
    )
    runtime = Runtime.build("probe", settings, install_global=False)
    built = service_app(
        runtime,
        title="probe",
        register=nothing,
        routers=[router],
        lean_routes=[ECHO] if lean else [],
    )
    assert isinstance(built, ServiceApp)
    return built


def both(call: Callable[[TestClient], Any]) -> tuple[Any, Any, int]:
    """The same call to the app with its lean route and without; and how many it served."""
    lean, plain = app(True), app(False)
    with_lean, without = call(TestClient(lean)), call(TestClient(plain))
    assert isinstance(lean.lean, LeanRoutes)
    return with_lean, without, lean.lean.served


def post(body: Any, headers: dict[str, str] = HEADERS, path: str = "agent-1/echo") -> Any:
    def call(client: TestClient) -> Any:
        return client.post(f"/internal/v1/agents/{path}", json=body, headers=headers)

    return call


def same(left: Any, right: Any) -> None:
    assert (left.status_code, left.json()) == (right.status_code, right.json())
    assert left.headers["content-type"] == right.headers["content-type"]


def test_a_clean_call_is_served_lean_with_the_apps_answer() -> None:
    lean, plain, served = both(post({"word": "hello"}))
    assert served == 1
    same(lean, plain)
    assert lean.json() == {"tenant": "t1", "agent": "agent-1", "word": "hello"}


@pytest.mark.parametrize(
    "call",
    [
        post({"word": "hello"}, headers={TENANT_HEADER: "t1"}),
        post({"word": "hello"}, headers={TENANT_HEADER: "t1", TOKEN_HEADER: "wrong"}),
        post({"word": "hello"}, headers={TOKEN_HEADER: TOKEN}),
        post({"word": ""}),
        post({"word": "hello", "extra": 1}),
        post({"word": "hello"}, path="agent-1/echo?verbose=1"),
        post({"word": "hello"}, path="agent.1/echo"),
        post({"word": "x" * 100}),
    ],
    ids=[
        "no-token",
        "wrong-token",
        "no-tenant",
        "field-refused",
        "unknown-field",
        "undeclared-parameter",
        "agent-refused",
        "body-over-its-limit",
    ],
)
def test_every_other_call_is_answered_by_the_app(call: Callable[[TestClient], Any]) -> None:
    lean, plain, served = both(call)
    assert served == 0
    same(lean, plain)
    assert lean.status_code in {400, 401, 404, 422}


def test_a_body_that_is_not_json_is_the_apps_to_refuse() -> None:
    def call(client: TestClient) -> Any:
        headers = {**HEADERS, "content-type": "text/plain"}
        return client.post("/internal/v1/agents/a/echo", content=b'{"word":"hi"}', headers=headers)

    lean, plain, served = both(call)
    assert served == 0
    assert lean.status_code == plain.status_code


@pytest.mark.parametrize("word, status", [("conflict", 409), ("down", 503)])
def test_what_the_handler_raises_is_answered_as_the_app_answers_it(word: str, status: int) -> None:
    lean, plain, served = both(post({"word": word}))
    assert served == 1
    same(lean, plain)
    assert lean.status_code == status


def test_a_sampled_call_makes_a_server_span_named_by_the_route_without_content() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    routes = LeanRoutes([ECHO], provider)
    state = SimpleNamespace(internal_token=TOKEN)

    async def unused(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("a clean call must not reach the app")

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        await routes(scope, receive, send, unused, state)

    headers = {**HEADERS, "traceparent": f"00-{TRACE}-b7ad6b7169203331-01"}
    answer = TestClient(served).post(
        "/internal/v1/agents/a1/echo", json={"word": "secretword"}, headers=headers
    )
    assert answer.status_code == 200
    [span] = exporter.get_finished_spans()
    assert span.name == "POST /internal/v1/agents/{agent_id}/echo"
    assert format(span.context.trace_id, "032x") == TRACE
    assert span.attributes is not None
    assert span.attributes["http.route"] == "/internal/v1/agents/{agent_id}/echo"
    assert span.attributes["http.response.status_code"] == 200
    assert "secretword" not in str(dict(span.attributes))


def test_each_served_call_records_the_request_duration_by_route_and_status() -> None:
    reader = InMemoryMetricReader()
    routes = LeanRoutes([ECHO], TracerProvider(), MeterProvider(metric_readers=[reader]))
    state = SimpleNamespace(internal_token=TOKEN)

    async def unused(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("a clean call must not reach the app")

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        await routes(scope, receive, send, unused, state)

    client = TestClient(served)
    for word in ("hello", "conflict"):
        client.post("/internal/v1/agents/a1/echo", json={"word": word}, headers=HEADERS)
    data = reader.get_metrics_data()
    assert data is not None
    recorded = [
        (dict(point.attributes or {}), point.count)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "http.server.request.duration"
        for point in metric.data.data_points
        if isinstance(point, HistogramDataPoint)
    ]
    route = "/internal/v1/agents/{agent_id}/echo"
    assert sorted((a["http.route"], a["http.response.status_code"], n) for a, n in recorded) == [
        (route, 200, 1),
        (route, 409, 1),
    ]
