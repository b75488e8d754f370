"""Problem+json answers become typed exceptions carrying status, type, title, detail and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_client import (
    NO_RETRY,
    BadRequest,
    Conflict,
    EngramClient,
    EngramError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
)
from tests.unit.client.stub import Reply, StubServer, problem

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("reply", "expected", "kind"),
    [
        (problem(400, "bad-request"), BadRequest, "bad-request"),
        (problem(401, "unauthorized", "the API key is not valid"), Unauthorized, "unauthorized"),
        (problem(404, "not-found", "no such document"), NotFound, "not-found"),
        (problem(409, "already-deleted", "already deleted"), Conflict, "already-deleted"),
        (problem(413, "payload-too-large"), PayloadTooLarge, "payload-too-large"),
        (problem(415, "unsupported-media-type"), UnsupportedMediaType, "unsupported-media-type"),
        (
            problem(422, "empty-document", "the document is empty"),
            ValidationFailed,
            "empty-document",
        ),
        (problem(429, "too-many-requests"), RateLimited, "too-many-requests"),
        (problem(503, "broker-unavailable", "retry"), ServiceUnavailable, "broker-unavailable"),
        (problem(500, "internal-error"), ServerError, "internal-error"),
        (problem(418, "teapot"), EngramError, "teapot"),
        (
            Reply(502, b"<html>bad gateway</html>", content_type="text/html"),
            ServerError,
            "http-502",
        ),
    ],
)
def test_each_status_raises_its_typed_error(
    stub: StubServer, reply: Reply, expected: type[EngramError], kind: str
) -> None:
    stub.on("GET", "/v1/documents/doc_1", reply)
    with EngramClient(stub.url, "egk_test", retry=NO_RETRY) as client:
        with pytest.raises(EngramError) as caught:
            client.get_document("doc_1")
    assert type(caught.value) is expected
    assert caught.value.status == reply.status
    assert caught.value.kind == kind
    assert caught.value.detail


def test_validation_errors_carry_where_and_why(stub: StubServer) -> None:
    errors = [{"loc": ["body", "name"], "msg": "String should have at most 200 characters"}]
    stub.on("POST", "/v1/agents", problem(422, "validation-error", "see errors", errors=errors))
    with EngramClient(stub.url, "egk_test") as client:
        with pytest.raises(ValidationFailed) as caught:
            client.create_agent("x" * 500)
    error = caught.value
    assert error.type == "/problems/validation-error"
    assert error.title and error.instance == "/stub"
    assert error.errors == errors
    assert str(error) == "422 validation-error: see errors"


def test_the_api_key_goes_only_in_the_authorization_header(stub: StubServer) -> None:
    stub.on("GET", "/v1/agents", Reply(200, {"agents": []}))
    with EngramClient(stub.url, "egk_secret_key") as client:
        assert client.list_agents() == []
        assert "egk_secret_key" not in repr(client.connection)
    seen = stub.requests[0]
    assert seen.headers["authorization"] == "Bearer egk_secret_key"
    assert seen.query == {}


def test_missing_api_key_fails_before_sending(
    stub: StubServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ENGRAM_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    stub.on("GET", "/healthz", Reply(200, {"status": "ok"}))
    with EngramClient(stub.url) as client:
        with pytest.raises(Unauthorized):
            client.list_agents()
        assert client.health().status == "ok", "health needs no key"
    assert [r.path for r in stub.requests] == ["/healthz"]
    assert "authorization" not in stub.requests[0].headers


def test_extra_fields_in_answers_are_kept(stub: StubServer) -> None:
    body = {"agent_id": "agt_1", "name": "planner", "created_at": None, "colour": "blue"}
    stub.on("POST", "/v1/agents", Reply(201, body))
    with EngramClient(stub.url, "egk_test") as client:
        agent = client.create_agent("planner")
    assert agent.agent_id == "agt_1"
    assert agent.model_extra == {"colour": "blue"}
