"""A tenant's admin keys manage its keys through the real gateway: issue, list, revoke (the
revoked key is refused at once here and soon by another instance), rotate; other keys get a
403, the last admin key stays (409), and every route refuses what it does not declare."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.support.polling import until
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def gateway(module_service: Callable[..., ServiceProcess]) -> ServiceProcess:
    """One gateway for the module: each test makes tenants of its own."""
    return module_service("gateway")


def _client(gateway: ServiceProcess, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=10
    )


def _problem(response: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["type"] == f"/problems/{kind}"
    return body


def test_an_admin_issues_lists_and_revokes_keys(gateway: ServiceProcess) -> None:
    admin_key = create_tenant(gateway.env, "keys")
    with _client(gateway, admin_key) as admin:
        created = admin.post("/v1/keys", json={"role": "default", "name": "ci"})
        assert created.status_code == 201, created.text
        new = created.json()
        assert new["key"].startswith(f"{new['prefix']}_") and new["role"] == "default"
        with _client(gateway, new["key"]) as ci:
            assert ci.get("/v1/agents").status_code == 200

            listed = admin.get("/v1/keys")
            assert listed.status_code == 200
            keys = {k["key_id"]: k for k in listed.json()["keys"]}
            assert keys[new["key_id"]]["name"] == "ci"
            assert sorted(k["role"] for k in keys.values()) == ["admin", "default"]
            secret = new["key"].split("_", 2)[2]
            assert secret not in listed.text and "hash" not in listed.text
            assert all(k["last_used_at"] is not None for k in keys.values()), "both were used"

            revoked = admin.delete(f"/v1/keys/{new['key_id']}")
            assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
            _problem(ci.get("/v1/agents"), 401, "unauthorized")
        assert admin.delete(f"/v1/keys/{new['key_id']}").status_code == 200, "again: unchanged"


def test_a_key_revoked_through_one_gateway_is_refused_by_another(
    service: Callable[..., ServiceProcess],
) -> None:
    first, second = service("gateway"), service("gateway")
    admin_key = create_tenant(first.env, "two")
    with _client(first, admin_key) as admin:
        new = admin.post("/v1/keys", json={"role": "default"}).json()
        with _client(second, new["key"]) as elsewhere:
            assert elsewhere.get("/v1/agents").status_code == 200
            assert admin.delete(f"/v1/keys/{new['key_id']}").status_code == 200
            until(
                lambda: elsewhere.get("/v1/agents").status_code == 401,
                "the other gateway refuses the revoked key",
            )


def test_rotation_replaces_a_key_with_the_same_role_and_name(gateway: ServiceProcess) -> None:
    admin_key = create_tenant(gateway.env, "rotate")
    with _client(gateway, admin_key) as admin:
        old = admin.post("/v1/keys", json={"role": "admin", "name": "deploy"}).json()
        rotated = admin.post(f"/v1/keys/{old['key_id']}:rotate")
        assert rotated.status_code == 201, rotated.text
        new = rotated.json()
        assert (new["role"], new["name"], new["replaces"]) == ("admin", "deploy", old["key_id"])
        assert new["key_id"] != old["key_id"]
        with _client(gateway, old["key"]) as stale, _client(gateway, new["key"]) as fresh:
            _problem(stale.get("/v1/keys"), 401, "unauthorized")
            assert fresh.get("/v1/keys").status_code == 200
        _problem(admin.post(f"/v1/keys/{old['key_id']}:rotate"), 409, "key-revoked")


def test_a_key_without_the_admin_role_cannot_manage_keys(gateway: ServiceProcess) -> None:
    admin_key = create_tenant(gateway.env, "roles")
    with _client(gateway, admin_key) as admin:
        plain = admin.post("/v1/keys", json={"role": "default"}).json()
        with _client(gateway, plain["key"]) as member:
            _problem(member.get("/v1/keys"), 403, "forbidden")
            _problem(member.post("/v1/keys", json={"role": "admin"}), 403, "forbidden")
            _problem(member.delete(f"/v1/keys/{plain['key_id']}"), 403, "forbidden")
            _problem(member.post(f"/v1/keys/{plain['key_id']}:rotate"), 403, "forbidden")
        _problem(admin.post("/v1/keys", json={"role": "ops"}), 422, "validation-error")


def test_the_last_admin_key_cannot_be_revoked(gateway: ServiceProcess) -> None:
    admin_key = create_tenant(gateway.env, "last")
    with _client(gateway, admin_key) as admin:
        mine = admin.get("/v1/keys").json()["keys"]
        assert [k["role"] for k in mine] == ["admin"], "create-tenant's key is the admin"
        _problem(admin.delete(f"/v1/keys/{mine[0]['key_id']}"), 409, "last-admin-key")
        assert admin.get("/v1/keys").status_code == 200
        other = admin.post("/v1/keys", json={"role": "admin"}).json()
        assert admin.delete(f"/v1/keys/{mine[0]['key_id']}").status_code == 200
    with _client(gateway, other["key"]) as second:
        _problem(second.delete(f"/v1/keys/{other['key_id']}"), 409, "last-admin-key")


def test_another_tenants_key_is_not_found(gateway: ServiceProcess) -> None:
    key_a, key_b = create_tenant(gateway.env, "a"), create_tenant(gateway.env, "b")
    with _client(gateway, key_a) as a, _client(gateway, key_b) as b:
        theirs = b.post("/v1/keys", json={"role": "default"}).json()
        _problem(a.delete(f"/v1/keys/{theirs['key_id']}"), 404, "not-found")
        _problem(a.post(f"/v1/keys/{theirs['key_id']}:rotate"), 404, "not-found")
        assert theirs["key_id"] not in a.get("/v1/keys").text


def test_key_routes_refuse_what_they_do_not_declare(gateway: ServiceProcess) -> None:
    admin_key = create_tenant(gateway.env, "strict")
    with _client(gateway, admin_key) as admin:
        key_id = admin.get("/v1/keys").json()["keys"][0]["key_id"]
        _problem(admin.get("/v1/keys", params={"role": "admin"}), 422, "unknown-parameter")
        _problem(admin.delete(f"/v1/keys/{key_id}", params={"x": "1"}), 422, "unknown-parameter")
        extra = admin.post("/v1/keys", json={"role": "default", "owner": "x"})
        _problem(extra, 422, "validation-error")
        rotate_extra = admin.post(f"/v1/keys/{key_id}:rotate", json={"grace_seconds": 5})
        _problem(rotate_extra, 422, "validation-error")
        assert len(admin.get("/v1/keys").json()["keys"]) == 1, "nothing was issued"


def test_the_operator_grants_admin_to_a_key_read_from_stdin(gateway: ServiceProcess) -> None:
    admin_key = create_tenant(gateway.env, "grant")
    with _client(gateway, admin_key) as admin:
        plain = admin.post("/v1/keys", json={"role": "default"}).json()

    def grant(key: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "engram_gateway", "grant-admin"],
            input=key + "\n",
            env={**os.environ, **gateway.env},
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert grant(plain["key"][:-2] + "xx").returncode == 1, "a wrong secret grants nothing"
    assert grant(plain["key"]).returncode == 0
    with _client(gateway, plain["key"]) as promoted:
        until(lambda: promoted.get("/v1/keys").status_code == 200, "the key manages keys")
        roles = {k["key_id"]: k["role"] for k in promoted.get("/v1/keys").json()["keys"]}
    assert roles[plain["key_id"]] == "admin"
