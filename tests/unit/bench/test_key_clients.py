"""The benches' gateway clients: one per API key, built once, so no request is timed right after
building one (~25 ms of CPU on the cores the services share)."""

from __future__ import annotations

import httpx
import pytest

from bench._key_clients import KeyClients, bearer_client

pytestmark = pytest.mark.unit


def test_a_key_seen_again_reuses_its_client() -> None:
    built: list[str] = []

    def build(key: str) -> httpx.Client:
        built.append(key)
        return httpx.Client(base_url="http://127.0.0.1:1")

    clients = KeyClients(build)
    first = clients("key-a")
    assert clients("key-a") is first
    assert clients("key-b") is not first
    assert clients("key-a") is first
    assert built == ["key-a", "key-b"]
    clients.close()
    assert first.is_closed


def test_a_bearer_client_sends_its_key() -> None:
    client = bearer_client("http://gateway.test")("egk_1_s")
    assert client.headers["Authorization"] == "Bearer egk_1_s"
    assert str(client.base_url) == "http://gateway.test"
    client.close()
