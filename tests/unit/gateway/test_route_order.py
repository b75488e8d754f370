"""The gateway matches a request against its public routes in order, the route table FastAPI
also lists its OpenAPI paths in: the hottest routes come first, so a recall is not matched
against some forty other routes (twice) before its own."""

from __future__ import annotations

import pytest

from engram_gateway.config import GatewaySettings
from engram_gateway.main import create_app

pytestmark = pytest.mark.unit


def test_single_memory_writes_then_recall_are_the_first_public_routes() -> None:
    settings = GatewaySettings(
        internal_token="t" * 32, tracing_enabled=False, metrics_enabled=False
    )
    app = create_app(settings, install_global=False)
    public = [path for path in app.openapi()["paths"] if path.startswith("/v1/")]
    assert public[:3] == [
        "/v1/agents/{agent_id}/memories",
        "/v1/agents/{agent_id}/memories:batch",
        "/v1/agents/{agent_id}/recall",
    ]
