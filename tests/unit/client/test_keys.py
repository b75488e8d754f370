"""The client and `engram keys` manage a tenant's keys, and a quota refusal is a typed error
carrying the quota, its limit and what is used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram_client import (
    NO_RETRY,
    AsyncEngramClient,
    EngramClient,
    Forbidden,
    QuotaExceeded,
)
from engram_client.cli.main import main
from tests.unit.client.stub import Reply, StubServer, problem

pytestmark = pytest.mark.unit

KEY_ID = "0123456789abcdef"
VIEW = {
    "key_id": KEY_ID,
    "prefix": f"egk_{KEY_ID}",
    "name": "ci",
    "role": "default",
    "created_at": "2026-12-01T00:00:00Z",
    "last_used_at": None,
    "revoked_at": None,
}
ISSUED = {**VIEW, "key": f"egk_{KEY_ID}_" + "s" * 43}


def run(env_file: Path, *argv: str) -> int:
    return int(main([*argv, "--env-file", str(env_file)]))


def test_the_client_issues_lists_revokes_and_rotates(stub: StubServer) -> None:
    stub.on("POST", "/v1/keys", Reply(201, ISSUED))
    stub.on("GET", "/v1/keys", Reply(200, {"keys": [VIEW]}))
    stub.on(
        "DELETE", f"/v1/keys/{KEY_ID}", Reply(200, {**VIEW, "revoked_at": "2026-12-02T00:00:00Z"})
    )
    stub.on("POST", f"/v1/keys/{KEY_ID}:rotate", Reply(201, {**ISSUED, "replaces": KEY_ID}))
    with EngramClient(stub.url, "egk_test", retry=NO_RETRY) as client:
        issued = client.create_key("default", "ci")
        assert issued.key == ISSUED["key"] and issued.role == "default"
        assert [k.key_id for k in client.list_keys()] == [KEY_ID]
        assert client.revoke_key(KEY_ID).revoked_at is not None
        assert client.rotate_key(KEY_ID).replaces == KEY_ID
    assert stub.seen("POST", "/v1/keys")[0].json() == {"role": "default", "name": "ci"}


async def test_the_async_client_issues_keys(stub: StubServer) -> None:
    stub.on("POST", "/v1/keys", Reply(201, ISSUED))
    async with AsyncEngramClient(stub.url, "egk_test", retry=NO_RETRY) as client:
        issued = await client.create_key("admin")
    assert issued.key_id == KEY_ID
    assert stub.seen("POST", "/v1/keys")[0].json() == {"role": "admin"}


def test_a_quota_refusal_is_a_typed_forbidden_naming_the_quota(stub: StubServer) -> None:
    refusal = problem(403, "quota-exceeded", "over", quota="memories", limit=3, used=3, requested=1)
    stub.on("POST", "/v1/agents/agt_1/memories", refusal)
    with EngramClient(stub.url, "egk_test", retry=NO_RETRY) as client:
        with pytest.raises(QuotaExceeded) as caught:
            client.write_memory("agt_1", "tea at five")
    error = caught.value
    assert isinstance(error, Forbidden)
    assert (error.quota, error.limit, error.used, error.requested) == ("memories", 3, 3, 1)


def test_other_forbidden_answers_stay_forbidden(stub: StubServer) -> None:
    stub.on("GET", "/v1/keys", problem(403, "forbidden", "needs admin"))
    with EngramClient(stub.url, "egk_test", retry=NO_RETRY) as client:
        with pytest.raises(Forbidden) as caught:
            client.list_keys()
    assert type(caught.value) is Forbidden


def test_keys_create_prints_only_the_key(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("POST", "/v1/keys", Reply(201, ISSUED))
    assert run(env_file, "keys", "create", "--role", "admin", "--name", "ci") == 0
    assert capsys.readouterr().out.strip() == ISSUED["key"]
    assert stub.seen("POST", "/v1/keys")[0].json() == {"role": "admin", "name": "ci"}


def test_keys_list_never_prints_a_secret(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("GET", "/v1/keys", Reply(200, {"keys": [VIEW]}))
    assert run(env_file, "keys", "list", "--json") == 0
    assert [k["key_id"] for k in json.loads(capsys.readouterr().out)] == [KEY_ID]


def test_keys_revoke_of_the_last_admin_exits_1_with_the_reason(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("DELETE", f"/v1/keys/{KEY_ID}", problem(409, "last-admin-key", "last admin key"))
    assert run(env_file, "keys", "revoke", KEY_ID) == 1
    assert "409 last-admin-key" in capsys.readouterr().err


def test_keys_rotate_prints_the_new_key(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("POST", f"/v1/keys/{KEY_ID}:rotate", Reply(201, {**ISSUED, "replaces": KEY_ID}))
    assert run(env_file, "keys", "rotate", KEY_ID) == 0
    assert capsys.readouterr().out.strip() == ISSUED["key"]


def test_a_non_admin_key_is_told_which_role_it_needs(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("GET", "/v1/keys", problem(403, "forbidden", "needs admin"))
    assert run(env_file, "keys", "list") == 1
    assert "admin role" in capsys.readouterr().err
