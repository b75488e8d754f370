"""Whose key a call carries: stdio's from the environment, HTTP's from each request, never mixed."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from engram_mcp.config import McpSettings
from engram_mcp.keys import BearerKey, EnvironmentKey, MissingKey

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer egk_a"},
        {"authorization": "bearer   egk_a "},
        {"AUTHORIZATION": "BEARER egk_a"},
    ],
)
def test_http_takes_the_bearer_token_of_the_request(headers: dict[str, str]) -> None:
    assert BearerKey().key_for(headers) == "egk_a"


@pytest.mark.parametrize(
    "headers",
    [
        None,
        {},
        {"authorization": "Basic dXNlcg=="},
        {"authorization": "Bearer "},
        {"x-api-key": "egk_a"},
    ],
)
def test_http_without_a_bearer_token_is_refused(headers: dict[str, str] | None) -> None:
    with pytest.raises(MissingKey, match="Authorization: Bearer"):
        BearerKey().key_for(headers)


def test_stdio_uses_the_environment_key_whatever_the_headers() -> None:
    source = EnvironmentKey(SecretStr("egk_env"))
    assert source.key_for(None) == "egk_env"
    assert source.key_for({"authorization": "Bearer egk_other"}) == "egk_env"


@pytest.mark.parametrize("key", [None, SecretStr(""), SecretStr("  ")])
def test_stdio_without_a_key_is_refused(key: SecretStr | None) -> None:
    with pytest.raises(MissingKey, match="ENGRAM_API_KEY"):
        EnvironmentKey(key).key_for(None)


def test_settings_read_the_clients_variables_and_hide_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ENGRAM_URL", "http://127.0.0.1:9999")
    monkeypatch.setenv("ENGRAM_API_KEY", "egk_secret")
    monkeypatch.setenv("ENGRAM_MCP_TRANSPORT", "http")
    monkeypatch.setenv("ENGRAM_MCP_PORT", "9100")
    settings = McpSettings()
    assert settings.gateway_url == "http://127.0.0.1:9999"
    assert settings.transport == "http" and settings.url == "http://127.0.0.1:9100/mcp"
    assert "egk_secret" not in repr(settings)
    monkeypatch.setenv("ENGRAM_MCP_GATEWAY_URL", "http://127.0.0.1:8080")
    monkeypatch.setenv("GATEWAY_URL", "http://elsewhere:1")
    monkeypatch.setenv("API_KEY", "egk_not_ours")
    monkeypatch.delenv("ENGRAM_API_KEY")
    settings = McpSettings()
    assert settings.gateway_url == "http://127.0.0.1:8080" and settings.api_key is None
