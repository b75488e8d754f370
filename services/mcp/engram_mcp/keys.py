"""Whose API key a tool call runs with: the caller's bearer token over HTTP, ENGRAM_API_KEY over stdio.

The server holds no key of its own for HTTP callers, so a call can see exactly what the
caller's key sees at the gateway and nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from pydantic import SecretStr


class MissingKey(Exception):
    """The call carries no usable API key; the message tells the caller how to send one."""


class KeySource(Protocol):
    """Finds the key of one tool call from the headers of the message that carried it."""

    def key_for(self, headers: Mapping[str, str] | None) -> str: ...


@dataclass(frozen=True)
class EnvironmentKey:
    """stdio: one caller per process, so the key is the one its MCP host put in the environment."""

    key: SecretStr | None

    def key_for(self, headers: Mapping[str, str] | None) -> str:
        """The configured key; a call without one is refused rather than sent anonymously."""
        if self.key is None or not self.key.get_secret_value().strip():
            raise MissingKey(
                "no Engram API key: set ENGRAM_API_KEY in the MCP server's environment"
            )
        return self.key.get_secret_value().strip()


@dataclass(frozen=True)
class BearerKey:
    """Streamable HTTP: every request names its caller in `Authorization: Bearer <key>`."""

    def key_for(self, headers: Mapping[str, str] | None) -> str:
        """The bearer token of this request; never a fallback to any other key."""
        value = _header(headers, "authorization")
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise MissingKey(
                "no Engram API key: send it as `Authorization: Bearer <key>` on every MCP request"
            )
        return token.strip()


def _header(headers: Mapping[str, str] | None, name: str) -> str:
    """A header by case-insensitive name (Starlette's headers are; a plain mapping may not be)."""
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return value
    return ""
