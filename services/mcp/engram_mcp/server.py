"""The MCP server: Engram's tools on the official SDK, with a key source per transport."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer

from engram_client import AsyncEngramClient
from engram_mcp import descriptions
from engram_mcp.config import LogLevel, McpSettings
from engram_mcp.keys import KeySource
from engram_mcp.tools import Connect, EngramTools

VERSION = "0.1.0"


def gateway_connector(settings: McpSettings) -> Connect:
    """A fresh client per call, so no key outlives the request that carried it."""

    @asynccontextmanager
    async def connect(key: str) -> AsyncIterator[AsyncEngramClient]:
        async with AsyncEngramClient(
            settings.gateway_url, key, timeout=settings.timeout_seconds
        ) as client:
            yield client

    return connect


def build_server(
    connect: Connect, keys: KeySource, log_level: LogLevel = "WARNING"
) -> MCPServer[Any]:
    """An MCP server offering every Engram tool; `keys` decides whose key each call carries."""
    server: MCPServer[Any] = MCPServer(
        "engram",
        title="Engram",
        instructions=descriptions.INSTRUCTIONS,
        version=VERSION,
        log_level=log_level,
    )
    EngramTools(connect, keys).register(server)
    return server
