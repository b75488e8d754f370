"""The gateway, the only internal caller, refuses to start without the internal token and sends
it on every internal call."""

from __future__ import annotations

import httpx
import pytest

from engram_gateway.__main__ import main
from engram_gateway.adapters.internal import InternalServices
from engram_platform.internal import TENANT_HEADER, TOKEN_HEADER

pytestmark = pytest.mark.unit


def test_serving_without_a_token_exits_saying_why(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ENGRAM_INTERNAL_TOKEN", raising=False)
    assert main(["serve"]) == 2
    assert "ENGRAM_INTERNAL_TOKEN is not set" in capsys.readouterr().err


def test_a_blank_token_is_no_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENGRAM_INTERNAL_TOKEN", " ")
    assert main(["serve"]) == 2
    assert "ENGRAM_INTERNAL_TOKEN is not set" in capsys.readouterr().err


async def test_every_internal_call_carries_the_token_and_the_tenant() -> None:
    seen: list[httpx.Headers] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return httpx.Response(200, json={})

    owners = InternalServices({"memory": "http://memory"}, token="s3cret", timeout=1.0)
    owners.client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    await owners.request("memory", "GET", "/internal/v1/x", tenant_id="tnt_a")
    await owners.close()
    assert [(h[TOKEN_HEADER], h[TENANT_HEADER]) for h in seen] == [("s3cret", "tnt_a")]
