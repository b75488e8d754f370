"""Fuzz the gateway's public API from its own OpenAPI: no 5xx, and every 4xx is a problem.

ENGRAM_FUZZ_EXAMPLES bounds the examples per operation (small for `make test`, large for
`make fuzz`); every request goes to a running platform, with and without a real API key.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from tests.support.platform import Platform

EXAMPLES = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "25"))
PROBLEM_JSON = "application/problem+json"
SEEN: Counter[str] = Counter()
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_ctx: schemathesis.SerializationContext, value: Any) -> bytes:
    """`POST /v1/import` takes an export's NDJSON bytes: fuzzed bodies go as they are."""
    return value if isinstance(value, bytes) else str(value).encode()


@pytest.fixture(scope="module")
def gateway_schema(platform: Platform) -> Any:
    """The OpenAPI the running gateway serves, not a copy checked into the tests."""
    schema = schemathesis.openapi.from_url(f"{platform.url}/openapi.json")
    schema.config.generation.update(max_examples=EXAMPLES)
    return schema


@pytest.fixture(scope="module")
def agent_id(platform: Platform) -> str:
    """A real agent, so agent routes get past the ownership check with fuzzed bodies."""
    with platform.client() as client:
        response = client.post("/v1/agents", json={"name": "fuzz-target"})
        assert response.status_code == 201, response.text
        return str(response.json()["agent_id"])


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    """One connection pool for every fuzzed request."""
    with requests.Session() as http:
        yield http


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    """Print how many examples ran, by mode and status class (the issue asks for the count)."""
    yield
    total = sum(v for k, v in SEEN.items() if k.count(" ") == 0)
    print(f"\nfuzz: {total} requests, {EXAMPLES} max examples per operation; {dict(SEEN)}")


def check(case: Any, response: Any, mode: str) -> None:
    """The two rules: never a 5xx, and a 4xx always speaks problem+json."""
    SEEN[mode] += 1
    SEEN[f"{mode} {response.status_code // 100}xx"] += 1
    where = (
        f"{case.method} {case.formatted_path} -> {response.status_code}\n{case.as_curl_command()}"
    )
    assert response.status_code < 500, f"server error: {where}\n{response.content[:500]!r}"
    if 400 <= response.status_code < 500:
        ctype = (response.headers.get("content-type") or [""])[0]
        assert ctype.split(";")[0].strip() == PROBLEM_JSON, f"4xx is {ctype!r}: {where}"


Send = Callable[[Any], Any]


def modes(operation: Any) -> list[GenerationMode]:
    """Negative cases need an input to break; `GET /healthz` has none."""
    inputs = (operation.path_parameters, operation.query, operation.headers, operation.body)
    if any(len(part) for part in inputs):
        return [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
    return [GenerationMode.POSITIVE]


def fuzz(schema: Any, send: Send, mode: str) -> list[str]:
    """Every operation in every mode it supports; collect all failures, don't stop at one."""
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        for generation in modes(operation):

            @FUZZ_SETTINGS
            @given(case=operation.as_strategy(generation_mode=generation))
            def run(case: Any) -> None:
                check(case, send(case), mode)

            try:
                run()
            except AssertionError as exc:
                failures.append(f"{operation.label} ({generation.value}): {exc}")
            except Unsatisfiable:
                if generation is not GenerationMode.NEGATIVE:
                    raise
                SEEN[f"{mode} no negative case: {operation.label}"] += 1
    return failures


def test_fuzz_with_api_key(
    gateway_schema: Any, platform: Platform, agent_id: str, session: requests.Session
) -> None:
    """Authenticated: half the agent-scoped cases target a real agent (never deleting it)."""

    def send(case: Any) -> Any:
        deletes_agent = case.method == "DELETE" and case.path == "/v1/agents/{agent_id}"
        params = case.path_parameters or {}
        if "agent_id" in params and not deletes_agent and SEEN["auth"] % 2 == 0:
            params["agent_id"] = agent_id
        headers = {"Authorization": f"Bearer {platform.key}"}
        return case.call(base_url=platform.url, session=session, headers=headers, timeout=30)

    failures = fuzz(gateway_schema, send, "auth")
    assert not failures, "\n\n".join(failures)


def test_fuzz_without_api_key(
    gateway_schema: Any, platform: Platform, session: requests.Session
) -> None:
    """Unauthenticated: every /v1 route refuses with a problem, never a 5xx and never a 2xx."""

    def send(case: Any) -> Any:
        if case.headers:
            case.headers.pop("Authorization", None)
        response = case.call(base_url=platform.url, session=session, timeout=30)
        if case.path.startswith("/v1/"):
            assert 400 <= response.status_code < 500, case.as_curl_command()
        return response

    failures = fuzz(gateway_schema, send, "anon")
    assert not failures, "\n\n".join(failures)


def chunks(total: int) -> Iterator[bytes]:
    """A body sent chunked, with no Content-Length for the gateway to refuse up front."""
    for _ in range(total // 65536):
        yield b" " * 65536


def test_what_the_schema_cannot_generate(platform: Platform, agent_id: str) -> None:
    """Unknown paths, wrong methods, broken JSON, a wrong media type, oversized bodies, and
    regressions for what the fuzzer found (ids extraction refuses, whitespace-only queries)."""
    json_type = {"content-type": "application/json"}
    with platform.client() as client:
        answers = {
            "unknown path": client.get("/v1/no-such-thing"),
            "import id extraction refuses": client.get("/v1/records:import/_aM_M"),
            "blank recall": client.post(f"/v1/agents/{agent_id}/recall", json={"query": "\t\x1c"}),
            "blank search": client.post("/v1/knowledge/search", json={"query": " \n"}),
            "wrong method": client.request("PATCH", "/v1/agents"),
            "broken json": client.post("/v1/agents", content=b"{not json", headers=json_type),
            "text body": client.post(
                "/v1/documents", content=b"a", headers={"content-type": "text/plain"}
            ),
            "declared 2 MiB": client.post(
                "/v1/agents", content=b" " * (2 << 20), headers=json_type
            ),
            "chunked 2 MiB": client.post("/v1/agents", content=chunks(2 << 20), headers=json_type),
            "chunked 40 MiB document": client.post(
                "/v1/documents", content=chunks(40 << 20), headers=json_type
            ),
        }
    statuses = {what: r.status_code for what, r in answers.items()}
    assert statuses == {
        "unknown path": 404,
        "import id extraction refuses": 422,
        "blank recall": 422,
        "blank search": 422,
        "wrong method": 405,
        "broken json": 422,
        "text body": 415,
        "declared 2 MiB": 413,
        "chunked 2 MiB": 413,
        "chunked 40 MiB document": 413,
    }
    for what, response in answers.items():
        assert response.headers["content-type"].startswith(PROBLEM_JSON), what
