"""The shared chat-completions adapter against the local stub: what it sends, and failures
classified; the reply rules and the settings every service with a model shares."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from engram_platform.chat import (
    ChatCompletions,
    ModelFailed,
    ModelUnavailable,
    Reply,
    json_output,
)
from tests.support.llm_stub import STUB_MODEL, LlmStub

pytestmark = pytest.mark.unit
BODY = {"model": "configured-model", "messages": [{"role": "user", "content": "Acme"}]}


@pytest.fixture
def stub() -> Iterator[LlmStub]:
    server = LlmStub().start()
    yield server
    server.stop()


async def test_the_reply_names_the_model_the_endpoint_reports(stub: LlmStub) -> None:
    stub.answer("Acme", records=[{"type": "carrier", "attributes": {"id": "c1"}}])
    endpoint = ChatCompletions(stub.url + "/", api_key=SecretStr("sk-test"))
    reply = await endpoint.complete(BODY)
    await endpoint.aclose()
    assert reply.model == STUB_MODEL != BODY["model"]
    assert reply.content is not None and '"c1"' in reply.content
    (call,) = stub.calls
    assert call.body == BODY and call.authorization == "Bearer sk-test"


@pytest.mark.parametrize("status", [500, 503, 429, 408])
async def test_server_errors_and_throttling_are_retryable(stub: LlmStub, status: int) -> None:
    stub.fail(status)
    with pytest.raises(ModelUnavailable, match=f"HTTP {status}"):
        await ChatCompletions(stub.url).complete(BODY)


@pytest.mark.parametrize("status", [400, 401, 404])
async def test_a_refused_request_is_permanent(stub: LlmStub, status: int) -> None:
    stub.fail(status)
    with pytest.raises(ModelFailed, match=f"refused the request \\(HTTP {status}\\)"):
        await ChatCompletions(stub.url).complete(BODY)


async def test_timeouts_and_unreachable_endpoints_are_retryable(stub: LlmStub) -> None:
    stub.stall_seconds = 1.0
    with pytest.raises(ModelUnavailable, match="timed out"):
        await ChatCompletions(stub.url, timeout_seconds=0.2).complete(BODY)
    with pytest.raises(ModelUnavailable, match="unreachable"):
        await ChatCompletions("http://127.0.0.1:9/v1", timeout_seconds=2).complete(BODY)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply("{nope", "m"), "not valid JSON (line 1 column 2)"),
        (Reply('{"a": [', "m", finish_reason="length"), "cut off at the token limit"),
        (Reply("  ", "m"), "returned no output"),
        (Reply('{"a": 1}', "m", refused=True), "refused to answer"),
    ],
)
def test_output_that_is_not_json_is_a_permanent_failure(reply: Reply, reason: str) -> None:
    with pytest.raises(ModelFailed, match=reason.replace("(", r"\(").replace(")", r"\)")):
        json_output(reply)


def test_json_output_and_its_hash() -> None:
    reply = Reply('{"facts": []}', "m")
    assert json_output(reply) == {"facts": []}
    assert len(reply.output_sha256) == 16 and reply.output_sha256 != Reply("{}", "m").output_sha256
