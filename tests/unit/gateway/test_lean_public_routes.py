"""A single memory write or a recall served before FastAPI answers as its route does, and
everything the route refuses is still refused by the route: each request goes to the gateway app
with its lean routes and to the same app without them, each over its own fakes of what the
lifespan builds."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

from engram_events import Envelope
from engram_gateway.api.dependencies import GatewayDeps
from engram_gateway.api.lean import LeanPublicRoutes
from engram_gateway.api.memory_writes import LEAN_WRITE
from engram_gateway.api.recall import LEAN_RECALL
from engram_gateway.config import GatewaySettings
from engram_gateway.domain.model import Agent, Caller
from engram_gateway.main import MAX_JSON_BYTES, create_app
from engram_gateway.service.intake import Intake
from engram_gateway.service.memory_writes import MemoryWrites
from engram_gateway.service.owner_answers import OwnerAnswers
from engram_gateway.service.rate_limiting import RateLimiter
from engram_platform.app import ServiceApp
from engram_platform.dependencies import install
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

KEY = "good-key"
AGENT = "agt_1"
PATH = f"/v1/agents/{AGENT}/memories"
RECALL = f"/v1/agents/{AGENT}/recall"
HEADERS = {"Authorization": f"Bearer {KEY}"}


class Registry:
    """One key of tenant `tnt_a`, which owns `agt_1`."""

    async def authenticate(self, token: str) -> Caller | None:
        return Caller(tenant_id="tnt_a", key_id="key_1") if token == KEY else None

    async def get_agent(self, tenant_id: str, agent_id: str) -> Agent | None:
        if (tenant_id, agent_id) != ("tnt_a", AGENT):
            return None
        return Agent(agent_id=agent_id, tenant_id=tenant_id, created_at=datetime.now(UTC))


class Keys:
    async def note_use(self, caller: Caller) -> None:
        return None


class TenantLimits:
    async def overrides(self, tenant_id: str) -> dict[str, Any]:
        return {}


class Sources:
    """A `supersedes` names another agent's memory; `derived_from` is never looked at."""

    async def check(
        self, tenant_id: str, agent_id: str, writes: Sequence[Any], where: Sequence[str]
    ) -> None:
        if any(w.supersedes for w in writes):
            raise Problem(404, detail="body.supersedes: no such memory of this agent")


class Owners:
    """The memory service: its duplicate lookup (content starting 'held' is held by mem_old)
    and recall (the query 'down' fails, 'bad' is refused, anything else is echoed)."""

    async def read_post(
        self, service: str, path: str, body: bytes, *, tenant_id: str
    ) -> tuple[int, bytes]:
        if path.endswith("/recall"):
            query = json.loads(body)
            if query["query"] == "down":
                return 500, b"{}"
            if query["query"] == "bad":
                refusal = {"type": "/problems/validation-error", "detail": "no", "errors": []}
                return 422, json.dumps(refusal).encode()
            return 200, json.dumps({"hits": [], "asked": query, "tenant": tenant_id}).encode()
        items = json.loads(body)["items"]
        found = [
            {"memory_id": "mem_old", "status": "active"}
            if i["content"].startswith("held")
            else None
            for i in items
        ]
        return 200, json.dumps({"found": found}).encode()


class Sink:
    """The broker: 'down' content cannot be published."""

    def __init__(self) -> None:
        self.published: list[Envelope[Any]] = []

    async def publish(self, event: Envelope[Any]) -> None:
        if event.payload.content == "down":
            raise ConnectionError("broker gone")
        self.published.append(event)

    async def publish_many(self, events: Sequence[Envelope[Any]]) -> None:
        self.published.extend(events)


class Submissions:
    async def record(self, tenant_id: str, kind: str, item_id: str, **fields: Any) -> None:
        return None

    async def get(self, tenant_id: str, kind: str, item_id: str) -> None:
        return None


def gateway(lean: bool, **overrides: Any) -> tuple[ServiceApp, Sink]:
    """The gateway app (lifespan not run) over fakes, with or without its lean write."""
    settings = GatewaySettings(
        internal_token="t" * 32,
        tracing_enabled=False,
        metrics_enabled=False,
        rate_limit_write_per_second=0.001,
        rate_limit_write_burst=4,
        **overrides,
    )
    app = create_app(settings, install_global=False)
    assert isinstance(app, ServiceApp)
    if not lean:
        app.lean = None
    sink = Sink()
    built: dict[str, Any] = {
        "settings": settings,
        "registry": Registry(),
        "keys": Keys(),
        "sources": Sources(),
        "tenant_limits": TenantLimits(),
        "rate_limiter": RateLimiter(settings.rate_limit_defaults()),
        "answers": OwnerAnswers(cast(Any, Owners())),
        "memory_writes": MemoryWrites(
            cast(Any, Owners()), Intake(cast(Any, sink), cast(Any, Submissions()))
        ),
    }
    unused: dict[str, Any] = {f: None for f in GatewayDeps.__dataclass_fields__ if f not in built}
    install(app, GatewayDeps(**built, **unused))
    return app, sink


def served(app: ServiceApp) -> int:
    assert isinstance(app.lean, LeanPublicRoutes)
    return app.lean.served


Call = Callable[[TestClient], Any]


def post(body: Any, headers: dict[str, str] = HEADERS, path: str = PATH) -> Call:
    return lambda client: client.post(path, json=body, headers=headers)


def recall(body: Any, headers: dict[str, str] = HEADERS, path: str = RECALL) -> Call:
    return post(body, headers, path)


def raw(content: bytes, headers: dict[str, str]) -> Call:
    return lambda client: client.post(PATH, content=content, headers={**HEADERS, **headers})


def answers(calls: Sequence[Call], **overrides: Any) -> tuple[list[Any], list[Any], int]:
    """Each call's answer from the app with the lean write, then from the app without it."""
    lean, _ = gateway(True, **overrides)
    plain, _ = gateway(False, **overrides)
    with_lean = [call(TestClient(lean)) for call in calls]
    without = [call(TestClient(plain)) for call in calls]
    return with_lean, without, served(lean)


def comparable(response: Any) -> tuple[int, Any, dict[str, str]]:
    """Status, body (ids of new memories blanked: each app makes its own) and the headers a
    client reads."""
    body = response.json()
    if response.status_code == 202:
        body = {**body, "memory_id": "*", "status_url": "*"}
    wanted = ("content-type", "ratelimit", "ratelimit-policy", "retry-after", "www-authenticate")
    return response.status_code, body, {h: response.headers.get(h) for h in wanted}


def same(left: Sequence[Any], right: Sequence[Any]) -> None:
    assert [comparable(r) for r in left] == [comparable(r) for r in right]


def test_a_clean_write_is_served_lean_with_the_routes_answer_and_its_event() -> None:
    lean, sink = gateway(True)
    answer = TestClient(lean).post(PATH, json={"content": "the user likes tea"}, headers=HEADERS)
    assert served(lean) == 1
    assert answer.status_code == 202
    memory_id = answer.json()["memory_id"]
    assert answer.json() == {
        "memory_id": memory_id,
        "status": "pending",
        "status_url": f"{PATH}/{memory_id}",
    }
    assert answer.headers["ratelimit-policy"] == '"write";q=4;w=4000'
    assert answer.headers["ratelimit"].startswith('"write";r=3;')
    [event] = sink.published
    assert event.payload.memory_id == memory_id and event.tenant_id == "tnt_a"
    assert event.payload.content == "the user likes tea" and event.payload.agent_id == AGENT

    with_lean, without, _ = answers([post({"content": "the user likes tea"})])
    same(with_lean, without)


def test_writes_that_pass_are_answered_alike_to_the_bucket_running_out() -> None:
    calls = [
        post({"content": "held already"}),
        post({"content": "fresh", "metadata": {"source_url": "x"}, "ttl_seconds": 60}),
        post({"content": "down"}),
        post({"content": "one more"}),
        post({"content": "over the limit"}),
    ]
    with_lean, without, count = answers(calls)
    assert count == len(calls)
    same(with_lean, without)
    assert [r.status_code for r in with_lean] == [200, 202, 503, 202, 429]
    assert with_lean[0].json()["deduplicated"] is True
    assert int(with_lean[4].headers["retry-after"]) >= 1


@pytest.mark.parametrize(
    "call",
    [
        post({"content": "hello"}, headers={}),
        post({"content": "hello"}, headers={"Authorization": "Bearer wrong"}),
        post({"content": "hello"}, headers={"Authorization": "Basic abc"}),
        post({"content": "hello"}, path="/v1/agents/agt_2/memories"),
        post({"content": "hello"}, path="/v1/agents/agt.1/memories"),
        post({"content": "hello"}, path=f"{PATH}?wait=1"),
        post({"content": "hello", "extra": 1}),
        post({"content": "   "}),
        post({"content": "hello", "metadata": {"a.b": 1}}),
        post({"content": "hello", "ttl_seconds": 0}),
        post({"content": "hello", "supersedes": "mem_elsewhere"}),
        raw(b'{"content": NaN}', {"content-type": "application/json"}),
        raw(b'{"content": "hello", "metadata": {"x": NaN}}', {"content-type": "application/json"}),
        raw(b'{"content": ', {"content-type": "application/json"}),
        raw(b'{"content": "hello"}', {"content-type": "text/plain"}),
        raw(b'{"content": "hello"}' + b" " * MAX_JSON_BYTES, {"content-type": "application/json"}),
    ],
    ids=[
        "no-key",
        "wrong-key",
        "not-bearer",
        "agent-not-owned",
        "agent-id-refused",
        "undeclared-parameter",
        "unknown-field",
        "blank-content",
        "dotted-metadata-key",
        "ttl-refused",
        "foreign-supersedes",
        "nan-content",
        "nan-metadata",
        "broken-json",
        "not-json",
        "body-over-the-cap",
    ],
)
def test_every_write_the_route_refuses_is_refused_by_the_route(call: Call) -> None:
    with_lean, without, count = answers([call])
    assert count == 0
    same(with_lean, without)
    assert with_lean[0].status_code in {400, 401, 404, 413, 415, 422}


def test_without_rate_limits_no_limit_headers_are_sent() -> None:
    with_lean, without, count = answers([post({"content": "free"})], rate_limits_enabled=False)
    assert count == 1
    same(with_lean, without)
    assert "ratelimit" not in with_lean[0].headers


def test_the_lean_routes_can_be_turned_off() -> None:
    settings = GatewaySettings(
        internal_token="t" * 32,
        tracing_enabled=False,
        metrics_enabled=False,
        lean_routes=False,
    )
    app = create_app(settings, install_global=False)
    assert isinstance(app, ServiceApp) and app.lean is None


def test_a_served_write_records_the_request_duration_by_route_and_status() -> None:
    reader = InMemoryMetricReader()
    app, _ = gateway(True)
    app.lean = LeanPublicRoutes(
        [LEAN_WRITE, LEAN_RECALL],
        TracerProvider(),
        MeterProvider(metric_readers=[reader]),
        max_body=MAX_JSON_BYTES,
    )
    client = TestClient(app)
    client.post(PATH, json={"content": "timed"}, headers=HEADERS)
    client.post(PATH, json={"content": "down"}, headers=HEADERS)
    client.post(RECALL, json={"query": "tea"}, headers=HEADERS)
    data = reader.get_metrics_data()
    assert data is not None
    points = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "http.server.request.duration"
        for point in metric.data.data_points
    ]
    seen = {
        (
            dict(p.attributes or {})["http.route"],
            dict(p.attributes or {})["http.response.status_code"],
            p.count,
        )
        for p in points
        if isinstance(p, HistogramDataPoint)
    }
    assert len(seen) == len(points)
    assert seen == {
        ("/v1/agents/{agent_id}/memories", 202, 1),
        ("/v1/agents/{agent_id}/memories", 503, 1),
        ("/v1/agents/{agent_id}/recall", 200, 1),
    }


def test_recalls_that_pass_are_answered_alike_to_the_bucket_running_out() -> None:
    calls = [
        recall({"query": "tea", "top_k": 3, "filter": {"metadata": {"source_url": "x"}}}),
        recall({"query": "down"}),
        recall({"query": "bad"}),
    ]
    calls += [recall({"query": "tea"})] * 2
    with_lean, without, count = answers(
        calls, rate_limit_read_per_second=0.001, rate_limit_read_burst=4
    )
    assert count == len(calls)
    same(with_lean, without)
    assert [r.status_code for r in with_lean] == [200, 503, 422, 200, 429]
    assert with_lean[0].json()["asked"] == {
        "query": "tea",
        "top_k": 3,
        "mode": "hybrid",
        "filter": {"metadata": {"source_url": "x"}},
    }
    assert with_lean[0].json()["tenant"] == "tnt_a"
    assert with_lean[0].headers["ratelimit-policy"] == '"read";q=4;w=4000'


@pytest.mark.parametrize(
    "call",
    [
        recall({"query": "tea"}, headers={"Authorization": "Bearer wrong"}),
        recall({"query": "tea"}, path="/v1/agents/agt_2/recall"),
        recall({"query": "tea"}, path=f"{RECALL}?mode=dense"),
        recall({"query": ""}),
        recall({"query": "tea", "top_k": 0}),
        recall({"query": "tea", "mode": "fuzzy"}),
        recall({"query": "tea", "filter": {"metadata": {"i": {"gte": "NaN"}}}}),
        recall({"query": "tea", "filter": {"metadata": {"a.b": 1}}}),
        recall({"query": "tea", "extra": True}),
    ],
    ids=[
        "wrong-key",
        "agent-not-owned",
        "undeclared-parameter",
        "empty-query",
        "top-k-refused",
        "unknown-mode",
        "filter-refused",
        "dotted-filter-key",
        "unknown-field",
    ],
)
def test_every_recall_the_route_refuses_is_refused_by_the_route(call: Call) -> None:
    with_lean, without, count = answers([call])
    assert count == 0
    same(with_lean, without)
    assert with_lean[0].status_code in {401, 404, 422}
