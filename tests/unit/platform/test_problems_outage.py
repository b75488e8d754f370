"""An unreachable database is a 503 problem (retry later), not a 500."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pymongo.errors import ServerSelectionTimeoutError

from engram_platform.problems import PROBLEM_JSON, install_problem_handlers

pytestmark = pytest.mark.unit


def test_database_outage_answers_503_problem() -> None:
    app = FastAPI()
    install_problem_handlers(app)

    @app.get("/thing")
    async def thing() -> None:
        raise ServerSelectionTimeoutError("no servers")

    response = TestClient(app).get("/thing")
    assert response.status_code == 503
    assert response.headers["content-type"] == PROBLEM_JSON
    assert response.json()["type"] == "/problems/database-unavailable"
