"""Tenancy at the gateway: keys bind to one tenant, foreign ids are 404, errors are problem+json."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def gateway(module_service: Callable[..., ServiceProcess]) -> ServiceProcess:
    """One gateway for the module: each test makes tenants of its own."""
    return module_service("gateway")


def _client(gateway: ServiceProcess, key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=gateway.url, headers=headers, timeout=10)


def test_health_ready_and_openapi(gateway: ServiceProcess) -> None:
    with _client(gateway, None) as anon:
        assert anon.get("/healthz").json() == {"status": "ok", "service": "gateway"}
        ready = anon.get("/readyz")
        assert ready.status_code == 200 and ready.json()["checks"] == {
            "mongodb": True,
            "kafka": True,
        }
        paths = anon.get("/openapi.json").json()["paths"]
    assert {"/v1/agents", "/v1/agents/{agent_id}", "/v1/documents"} <= set(paths)


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Bearer  x",
        "Basic abc",
        "Bearer egk_0000000000000000_" + "x" * 43,
        "Bearer {}",
    ],
)
def test_missing_or_invalid_keys_get_401_problem(
    gateway: ServiceProcess, header: str | None
) -> None:
    headers = {"Authorization": header} if header is not None else {}
    response = httpx.get(f"{gateway.url}/v1/agents", headers=headers)
    assert response.status_code == 401
    assert response.headers["content-type"].startswith(PROBLEM)
    assert response.json()["type"] == "/problems/unauthorized"


def test_a_key_sees_only_its_tenants_agents(gateway: ServiceProcess) -> None:
    key_a, key_b = create_tenant(gateway.env, "a"), create_tenant(gateway.env, "b")
    with _client(gateway, key_a) as a, _client(gateway, key_b) as b:
        created = a.post("/v1/agents", json={"name": "planner"})
        assert created.status_code == 201
        agent_id = created.json()["agent_id"]
        assert [x["agent_id"] for x in a.get("/v1/agents").json()["agents"]] == [agent_id]
        assert b.get("/v1/agents").json()["agents"] == []
        for response in (b.get(f"/v1/agents/{agent_id}"), b.delete(f"/v1/agents/{agent_id}")):
            assert response.status_code == 404
            assert response.headers["content-type"].startswith(PROBLEM)
        assert a.get(f"/v1/agents/{agent_id}").status_code == 200
        assert a.delete(f"/v1/agents/{agent_id}").status_code == 204
        assert a.get(f"/v1/agents/{agent_id}").status_code == 404


def test_validation_errors_are_problems_without_echoing_input(gateway: ServiceProcess) -> None:
    key = create_tenant(gateway.env)
    with _client(gateway, key) as client:
        bad = client.post("/v1/agents", json={"name": "x" * 500, "CANARY-extra": "CANARY-value"})
        forged = client.get("/v1/agents/{'$ne': null}")
    assert bad.status_code == 422
    assert bad.headers["content-type"].startswith(PROBLEM)
    assert "CANARY-value" not in bad.text and "x" * 300 not in bad.text
    assert forged.status_code in {404, 422}
    assert forged.headers["content-type"].startswith(PROBLEM)


@pytest.mark.parametrize(
    ("body", "status", "kind"),
    [
        ({"name": "a.csv", "mime": "text/csv", "text": ""}, 422, "empty-document"),
        (
            {"name": "../../etc/passwd", "mime": "text/csv", "text": "a,b\n"},
            422,
            "invalid-document-name",
        ),
        (
            {"name": "a.bin", "mime": "application/octet-stream", "text": "x"},
            415,
            "unsupported-media-type",
        ),
        ({"name": "a.csv", "mime": "text/csv", "content_base64": "/w=="}, 422, "invalid-encoding"),
        ({"name": "a.csv", "mime": "text/csv", "content_base64": "***"}, 422, "invalid-base64"),
        ({"name": "a.csv", "mime": "text/csv"}, 422, "validation-error"),
    ],
)
def test_bad_documents_get_clear_problems(
    gateway: ServiceProcess, body: dict[str, str], status: int, kind: str
) -> None:
    key = create_tenant(gateway.env)
    with _client(gateway, key) as client:
        response = client.post("/v1/documents", json=body)
    assert response.status_code == status, response.text
    assert response.json()["type"] == f"/problems/{kind}"


@pytest.mark.parametrize("doc_id", ["-", "_", "-abc"])
def test_a_document_id_no_owner_could_hold_is_a_422_naming_it(
    gateway: ServiceProcess, doc_id: str
) -> None:
    key = create_tenant(gateway.env)
    with _client(gateway, key) as client:
        for path in (f"/v1/documents/{doc_id}", f"/v1/documents/{doc_id}/passages"):
            response = client.get(path)
            assert response.status_code == 422, (path, response.text)
            assert response.json()["errors"][0]["loc"] == ["path", "doc_id"]
