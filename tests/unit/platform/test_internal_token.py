"""A service built with an internal token refuses internal calls that lack it."""

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
        internal_token=SecretStr(token) if token else None,
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


def test_without_a_configured_token_the_tenant_header_suffices() -> None:
    answer = client(None).get("/internal/whoami", headers={TENANT_HEADER: "t1"})
    assert answer.json() == {"tenant": "t1"}
