"""Routes get the composition root's dependencies typed, and a clear error before start-up."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient

from engram_platform.dependencies import install, provider

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class Built:
    greeting: str


def app_with_route() -> FastAPI:
    app = FastAPI()

    @app.get("/hello")
    def hello(built: Annotated[Built, Depends(provider(Built))]) -> dict[str, str]:
        return {"said": built.greeting}

    return app


def test_a_route_receives_the_installed_dependencies() -> None:
    app = app_with_route()
    install(app, Built("hi"))
    assert TestClient(app).get("/hello").json() == {"said": "hi"}


def test_a_route_before_installation_fails_naming_what_is_missing() -> None:
    app = app_with_route()
    with pytest.raises(RuntimeError, match="Built not installed"):
        TestClient(app).get("/hello")
