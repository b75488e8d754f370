"""The MCP server: Engram's tools on the official SDK, with a key source per transport."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult
from mcp_types import Tool as MCPTool

from engram_client import AsyncEngramClient
from engram_mcp import descriptions
from engram_mcp.config import LogLevel, McpSettings
from engram_mcp.keys import KeySource
from engram_mcp.results import unknown_arguments
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


class StrictServer(MCPServer[Any]):
    """Refuses arguments a tool does not declare, and says so in every tool's schema: the SDK
    would drop them, and a misspelt `filter` must not widen a recall unnoticed."""

    async def list_tools(self) -> list[MCPTool]:
        return [
            tool.model_copy(
                update={"input_schema": {**tool.input_schema, "additionalProperties": False}}
            )
            for tool in await super().list_tools()
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        declared = {
            tool.name: tool.input_schema.get("properties", {})
            for tool in await super().list_tools()
        }
        unknown = sorted(set(arguments) - set(declared.get(name, arguments)))
        if unknown:
            return unknown_arguments(name, unknown)
        return await super().call_tool(name, arguments, context)


def build_server(
    connect: Connect, keys: KeySource, log_level: LogLevel = "WARNING"
) -> MCPServer[Any]:
    """An MCP server offering every Engram tool; `keys` decides whose key each call carries."""
    server = StrictServer(
        "engram",
        title="Engram",
        instructions=descriptions.INSTRUCTIONS,
        version=VERSION,
        log_level=log_level,
    )
    EngramTools(connect, keys).register(server)
    return server
