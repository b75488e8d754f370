"""Request bodies over a route's cap are refused with 413 problem+json, declared or streamed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from engram_gateway.api.body_limit import BodyLimit
from engram_platform.problems import PROBLEM_JSON, install_problem_handlers

pytestmark = pytest.mark.unit


def client() -> TestClient:
    app = FastAPI()
    install_problem_handlers(app)

    @app.post("/small")
    @app.post("/big")
    async def echo(request: Request) -> dict[str, int]:
        return {"bytes": len(await request.body())}

    app.add_middleware(BodyLimit, default=100, by_path={"/big": 1000})
    return TestClient(app)


def chunks(count: int, size: int) -> Iterator[bytes]:
    for _ in range(count):
        yield b"x" * size


def test_declared_length_over_the_cap_is_413_before_the_route_runs() -> None:
    response = client().post("/small", content=b"x" * 101)
    assert response.status_code == 413
    assert response.headers["content-type"] == PROBLEM_JSON


def test_streamed_body_over_the_cap_is_413() -> None:
    response = client().post("/small", content=chunks(5, 50))
    assert response.status_code == 413
    assert response.headers["content-type"] == PROBLEM_JSON


def test_bodies_within_their_path_cap_pass() -> None:
    http = client()
    assert http.post("/small", content=b"x" * 100).json() == {"bytes": 100}
    assert http.post("/big", content=chunks(9, 100)).json() == {"bytes": 900}
