"""The memory service serves the gateway's two hot reads (recall, duplicates) on lean routes."""

from __future__ import annotations

import pytest

from engram_memory.api.lean import DUPLICATES, RECALL
from engram_memory.config import MemorySettings
from engram_memory.main import create_app
from engram_platform.app import ServiceApp
from engram_platform.lean_routes import LeanRoute, LeanRoutes

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "path, route",
    [
        ("/internal/v1/agents/agent-1/recall", RECALL),
        ("/internal/v1/agents/agent_1/memories/duplicates", DUPLICATES),
    ],
)
def test_the_hot_reads_have_lean_routes(path: str, route: LeanRoute) -> None:
    app = create_app(MemorySettings(tracing_enabled=False), install_global=False)
    assert isinstance(app, ServiceApp) and isinstance(app.lean, LeanRoutes)
    assert route in app.lean.routes
    assert route.pattern.fullmatch(path) is not None


def test_a_path_the_routes_refuse_is_not_matched() -> None:
    for bad in ("/internal/v1/agents/a.b/recall", f"/internal/v1/agents/{'a' * 65}/recall"):
        assert RECALL.pattern.fullmatch(bad) is None
