"""The composition root: settings → key source and gateway connector → the chosen transport."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse

from engram_mcp.config import McpSettings
from engram_mcp.keys import BearerKey, EnvironmentKey
from engram_mcp.server import build_server, gateway_connector


def stdio_server(settings: McpSettings) -> MCPServer[Any]:
    """One caller per process: the key its MCP host put in ENGRAM_API_KEY."""
    return build_server(
        gateway_connector(settings), EnvironmentKey(settings.api_key), settings.log_level
    )


def http_app(settings: McpSettings) -> Starlette:
    """Streamable HTTP at `settings.path`, each request carrying its caller's bearer key."""
    server = build_server(gateway_connector(settings), BearerKey(), settings.log_level)
    app = server.streamable_http_app(
        streamable_http_path=settings.path, stateless_http=True, host=settings.host
    )
    app.add_route("/healthz", _healthz, methods=["GET"])
    app.add_route("/readyz", _readyz(settings.gateway_url), methods=["GET"])
    return app


async def _healthz(request: Request) -> JSONResponse:
    """The process answers."""
    return JSONResponse({"status": "ok", "service": "mcp"})


def _readyz(gateway_url: str) -> Callable[[Request], Awaitable[JSONResponse]]:
    """Ready when the gateway is: every tool call goes through it."""

    async def readyz(request: Request) -> JSONResponse:
        try:
            async with httpx.AsyncClient(timeout=2.0) as client:
                status = (await client.get(f"{gateway_url.rstrip('/')}/readyz")).status_code
        except httpx.HTTPError:
            status = None
        ready = status == 200
        return JSONResponse(
            {"status": "ready" if ready else "unavailable", "service": "mcp", "gateway": status},
            status_code=200 if ready else 503,
        )

    return readyz


def main() -> None:
    """Serve over the transport ENGRAM_MCP_TRANSPORT names (stdio unless told otherwise)."""
    settings = McpSettings()
    if settings.transport == "stdio":
        anyio.run(stdio_server(settings).run_stdio_async)
        return
    uvicorn.run(
        http_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
    )
