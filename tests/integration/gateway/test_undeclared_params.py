"""The real gateway refuses query parameters a route does not read (422 naming them), before
anything runs: an unknown parameter on a clear clears nothing, a filter it cannot apply is not
silently dropped."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write
from tests.support.internal import internal_headers

pytestmark = pytest.mark.shared_stack

PROBLEM = "application/problem+json"


def _refused(response: httpx.Response, *names: str, kind: str = "unknown-parameter") -> None:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["type"] == f"/problems/{kind}"
    assert [e["loc"] for e in body["errors"]] == [["query", n] for n in names]
    for name in names:
        assert f"'{name}'" in body["detail"]


def test_an_unknown_parameter_on_clear_withdraws_nothing(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        memory_id = write(client, agent, "the staging database rotates its password on Fridays")
        wait_status(client, agent, memory_id, {"active"})

        _refused(client.delete(f"/v1/agents/{agent}/memories", params={"owner": "u2"}), "owner")
        assert client.get(f"/v1/agents/{agent}/memories/{memory_id}").json()["status"] == "active"
        listed = client.get(f"/v1/agents/{agent}/memories", params={"limit": 5})
        assert listed.status_code == 200, listed.text
        assert [(m["memory_id"], m["status"]) for m in listed.json()["memories"]] == [
            (memory_id, "active")
        ]

        cleared = client.delete(f"/v1/agents/{agent}/memories")
        assert cleared.json() == {"agent_id": agent, "withdrawn": 1}, "the same call, declared"
        wait_status(client, agent, memory_id, {"withdrawn"})


def test_unknown_and_repeated_parameters_are_refused_across_routes(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        _refused(client.get("/v1/knowledge/contradictions", params={"entity": "e1"}), "entity")
        _refused(
            client.get("/v1/knowledge/contradictions?status=open&status=resolved"),
            "status",
            kind="repeated-parameter",
        )
        _refused(client.get("/v1/agents", params={"foo": "1", "bar": "2"}), "bar", "foo")
        _refused(client.get("/v1/records", params={"document_id[$ne]": "x"}), "document_id[$ne]")
        _refused(client.get(f"/v1/agents/{agent}", params={"agent_id": "other"}), "agent_id")
        known = client.get(f"/v1/agents/{agent}/memories", params={"type": "note", "limit": 3})
        assert known.status_code == 200, known.text
        assert client.get("/v1/agents").status_code == 200
        assert client.get("/v1/no-such-route", params={"foo": "1"}).status_code == 404


def test_the_check_answers_before_authentication(stack: MemoryStack) -> None:
    """Only the request line is read, so an anonymous caller learns what the OpenAPI says."""
    with stack.client(None) as anonymous:
        _refused(anonymous.get("/v1/agents", params={"foo": "1"}), "foo")
        assert anonymous.get("/v1/agents").status_code == 401


def test_the_internal_apis_refuse_them_too(stack: MemoryStack) -> None:
    """The memory service's own app is a service_app: the same check guards its clear."""
    response = httpx.delete(
        f"{stack.memory.url}/internal/v1/agents/a1/memories",
        params={"owner": "u2"},
        headers=internal_headers("t1"),
    )
    _refused(response, "owner")
