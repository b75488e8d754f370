"""MCP server settings (prefix ENGRAM_MCP_): the gateway is ENGRAM_MCP_GATEWAY_URL, else the client's ENGRAM_URL; the stdio key ENGRAM_API_KEY."""

from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


class McpSettings(BaseSettings):
    """Which transport to serve, where the HTTP one listens, and which gateway to speak to."""

    model_config = SettingsConfigDict(
        env_prefix="ENGRAM_MCP_", extra="ignore", populate_by_name=True
    )

    transport: Literal["stdio", "http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(default=8087, ge=1, le=65535)
    path: str = Field(default="/mcp", pattern=r"^/[A-Za-z0-9/_-]*$")
    gateway_url: str = Field(
        default="http://127.0.0.1:8080",
        validation_alias=AliasChoices("ENGRAM_MCP_GATEWAY_URL", "ENGRAM_URL"),
    )
    api_key: SecretStr | None = Field(
        default=None,
        validation_alias="ENGRAM_API_KEY",
        description="stdio only: the HTTP transport takes each caller's key from its request",
    )
    timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    log_level: LogLevel = "WARNING"

    @property
    def url(self) -> str:
        """Where the HTTP transport answers, as a client should connect to it."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}{self.path}"
