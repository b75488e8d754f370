"""No service answers a trailing slash with a redirect built from the caller's Host header."""

from __future__ import annotations

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient

from engram_platform.app import service_app
from engram_platform.runtime import Runtime
from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit
router = APIRouter()


@router.get("/v1/agents")
async def agents() -> dict[str, list[str]]:
    return {"agents": []}


async def nothing(*_: object) -> None:
    return None


def client() -> TestClient:
    settings = ServiceSettings(tracing_enabled=False, metrics_enabled=False)
    runtime = Runtime.build("probe", settings, install_global=False)
    app = service_app(runtime, title="probe", register=nothing, routers=[router])
    return TestClient(app, follow_redirects=False)


def test_a_trailing_slash_is_a_404_problem_without_a_location() -> None:
    answer = client().get("/v1/agents/", headers={"Host": "evil.example"})
    assert answer.status_code == 404
    assert "location" not in answer.headers
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert answer.json()["type"] == "/problems/not-found"


def test_the_route_itself_still_answers() -> None:
    assert client().get("/v1/agents", headers={"Host": "evil.example"}).status_code == 200
