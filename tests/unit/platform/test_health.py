"""The health routes name their service, so a caller waiting on a port can tell that the
process answering is the one it started (two processes handed one port look alike otherwise)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from engram_platform.app import service_app
from engram_platform.runtime import Runtime
from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit


async def nothing(*_: object) -> None:
    """No stores to wire: the routes under test need none."""


def test_health_and_readiness_name_the_service() -> None:
    runtime = Runtime.build("probe", ServiceSettings(), install_global=False)
    client = TestClient(service_app(runtime, title="engram-probe", register=nothing))
    assert client.get("/healthz").json() == {"status": "ok", "service": "probe"}
    ready = client.get("/readyz")
    assert ready.status_code == 503, "not connected: nothing is ready"
    assert ready.json()["service"] == "probe"
