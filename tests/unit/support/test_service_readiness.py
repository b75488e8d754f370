"""Waiting for a service fails at once when another service answers on its port (the platform
looked ready while enrichment, given the gateway's port, had exited)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.services import ServiceProcess

pytestmark = pytest.mark.unit


class GatewayReady(BaseHTTPRequestHandler):
    """A ready gateway, as the port's other owner."""

    def do_GET(self) -> None:
        body = json.dumps({"status": "ready", "service": "gateway", "checks": {}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        """Quiet."""


@pytest.fixture
def gateway_port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), GatewayReady)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


def test_another_services_readiness_is_not_this_ones(gateway_port: int, tmp_path: Path) -> None:
    enrichment = ServiceProcess("enrichment", {}, gateway_port, tmp_path)
    with pytest.raises(RuntimeError, match="answers as 'gateway', not 'enrichment'"):
        enrichment.wait_ready(timeout=5)


def test_its_own_readiness_is(gateway_port: int, tmp_path: Path) -> None:
    ServiceProcess("gateway", {}, gateway_port, tmp_path).wait_ready(timeout=5)
