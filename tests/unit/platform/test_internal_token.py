"""Internal calls need the internal token: a call without it, or with a wrong one, is refused,
and so is every call to a service that has no token configured (closed by default)."""

from __future__ import annotations

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient
from pydantic import SecretStr

from engram_platform.app import service_app
from engram_platform.internal import TENANT_HEADER, TOKEN_HEADER, TenantDep
from engram_platform.runtime import Runtime
from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit
router = APIRouter()


@router.get("/internal/whoami")
async def whoami(tenant: TenantDep) -> dict[str, str]:
    return {"tenant": tenant}


async def nothing(*_: object) -> None:
    return None


def client(token: str | None) -> TestClient:
    settings = ServiceSettings(
        internal_token=SecretStr(token) if token is not None else None,
        tracing_enabled=False,
        metrics_enabled=False,
    )
    runtime = Runtime.build("probe", settings, install_global=False)
    return TestClient(service_app(runtime, title="probe", register=nothing, routers=[router]))


def test_a_call_without_the_token_is_refused() -> None:
    answer = client("s3cret").get("/internal/whoami", headers={TENANT_HEADER: "t1"})
    assert answer.status_code == 401


def test_a_call_with_a_wrong_token_is_refused() -> None:
    headers = {TENANT_HEADER: "t1", TOKEN_HEADER: "guess"}
    assert client("s3cret").get("/internal/whoami", headers=headers).status_code == 401


def test_a_call_with_the_token_names_its_tenant() -> None:
    headers = {TENANT_HEADER: "t1", TOKEN_HEADER: "s3cret"}
    answer = client("s3cret").get("/internal/whoami", headers=headers)
    assert answer.status_code == 200 and answer.json() == {"tenant": "t1"}


def test_without_a_configured_token_every_internal_call_is_refused() -> None:
    for headers in ({TENANT_HEADER: "t1"}, {TENANT_HEADER: "t1", TOKEN_HEADER: "anything"}):
        answer = client(None).get("/internal/whoami", headers=headers)
        assert answer.status_code == 401
        assert answer.headers["content-type"].startswith("application/problem+json")
        assert answer.json()["type"] == "/problems/internal-token-unset"


def test_a_blank_configured_token_is_no_token() -> None:
    answer = client("  ").get("/internal/whoami", headers={TENANT_HEADER: "t1", TOKEN_HEADER: "  "})
    assert answer.status_code == 401
    assert answer.json()["type"] == "/problems/internal-token-unset"


def test_a_blank_environment_token_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_INTERNAL_TOKEN", "")
    assert ServiceSettings().internal_token is None


def test_a_non_ascii_token_is_refused_not_an_error() -> None:
    headers = {
        TENANT_HEADER.encode(): b"t1",
        TOKEN_HEADER.encode(): "s3cr\u00e9t".encode("latin-1"),
    }
    answer = client("s3cret").get("/internal/whoami", headers=headers)
    assert answer.status_code == 401


def test_the_health_routes_need_no_token() -> None:
    assert client(None).get("/healthz").status_code == 200
