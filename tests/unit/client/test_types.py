"""The client and `engram types` read and change the tenant's record types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram_client import NO_RETRY, AsyncEngramClient, EngramClient, ValidationFailed
from engram_client.cli.main import main
from tests.unit.client.stub import Reply, StubServer, problem

pytestmark = pytest.mark.unit

DEFINITION = {
    "name": "order",
    "id_fields": ["no"],
    "required_fields": ["no"],
    "single_valued": None,
}
VIEW = {"name": "order", "origin": "tenant", "version": 2, "definition": DEFINITION}
BUNDLED = {"name": "contact", "origin": "bundled", "version": 1, "definition": {}}


def run(env_file: Path, *argv: str) -> int:
    return int(main([*argv, "--env-file", str(env_file)]))


def test_the_client_lists_reads_declares_and_retires(stub: StubServer) -> None:
    stub.on("GET", "/v1/schema/types", Reply(200, {"types": [BUNDLED, VIEW]}))
    stub.on("GET", "/v1/schema/types/order", Reply(200, VIEW), Reply(200, {**VIEW, "version": 1}))
    stub.on(
        "GET", "/v1/schema/types/order/versions", Reply(200, {"name": "order", "versions": [VIEW]})
    )
    stub.on("PUT", "/v1/schema/types/order", Reply(200, VIEW))
    stub.on("DELETE", "/v1/schema/types/order", Reply(200, {**VIEW, "version": 3, "retired": True}))
    with EngramClient(stub.url, "egk_test", retry=NO_RETRY) as client:
        assert [(t.name, t.origin) for t in client.list_types()] == [
            ("contact", "bundled"),
            ("order", "tenant"),
        ]
        assert client.get_type("order").version == 2
        assert client.get_type("order", version=1).version == 1
        assert [v.version for v in client.type_versions("order").versions] == [2]
        assert client.put_type("order", {"id_fields": ["no"]}).origin == "tenant"
        assert client.delete_type("order").retired
    assert stub.seen("PUT", "/v1/schema/types/order")[0].json() == {"id_fields": ["no"]}
    assert stub.seen("GET", "/v1/schema/types/order")[1].query == {"version": ["1"]}


async def test_a_bad_definition_is_a_validation_error_naming_the_field(stub: StubServer) -> None:
    errors = [{"loc": ["colour"], "msg": "Extra inputs are not permitted"}]
    stub.on("PUT", "/v1/schema/types/order", problem(422, "validation-error", "bad", errors=errors))
    async with AsyncEngramClient(stub.url, "egk_test", retry=NO_RETRY) as client:
        with pytest.raises(ValidationFailed):
            await client.put_type("order", {"colour": 1})


def test_the_cli_puts_a_definition_from_a_file_and_lists(
    stub: StubServer, env_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("PUT", "/v1/schema/types/order", Reply(200, VIEW))
    stub.on("GET", "/v1/schema/types", Reply(200, {"types": [BUNDLED, VIEW]}))
    stub.on("DELETE", "/v1/schema/types/order", Reply(200, {**VIEW, "version": 3, "retired": True}))
    path = tmp_path / "order.json"
    path.write_text(json.dumps({"id_fields": ["no"], "required_fields": ["no"]}))
    assert run(env_file, "types", "put", "order", str(path)) == 0
    assert run(env_file, "types", "list") == 0
    assert run(env_file, "types", "delete", "order") == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "order  tenant  2",
        "contact  bundled  1",
        "order  tenant  2",
        "order  tenant  3  retired",
    ]
    assert stub.seen("PUT", "/v1/schema/types/order")[0].json() == {
        "id_fields": ["no"],
        "required_fields": ["no"],
    }
