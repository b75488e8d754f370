"""An owning service's answer passed on: its 200 body untouched, its own errors as the gateway's
problems (extra members kept, its internal path not), and a 503 naming it for anything else."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from engram_gateway.service.owner_answers import OwnerAnswers
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

T = "tnt_a"


class Owner:
    """Every call answered with one status and body, and remembered."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.body = status, body
        self.calls: list[tuple[Any, ...]] = []

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response:
        self.calls.append((service, method, path, tenant_id, kwargs))
        return httpx.Response(self.status, content=self.body)

    async def read_post(
        self, service: str, path: str, body: bytes, *, tenant_id: str
    ) -> tuple[int, bytes]:
        self.calls.append((service, "POST", path, tenant_id, body))
        return self.status, self.body


def _problem(status: int, kind: str, **extra: Any) -> bytes:
    return json.dumps(
        {
            "type": f"/problems/{kind}",
            "title": "t",
            "status": status,
            "detail": "why",
            "instance": "/internal/v1/x",
            **extra,
        }
    ).encode()


async def test_a_200_passes_on_as_its_bytes_and_parsed() -> None:
    owner = Owner(200, b'{"hits": [1, 2]}')
    answers = OwnerAnswers(owner)
    assert await answers.raw("memory", "GET", "/p", tenant_id=T, params={"a": 1}) == owner.body
    assert await answers.json("memory", "GET", "/p", tenant_id=T) == {"hits": [1, 2]}
    assert await answers.read_post("memory", "/q", b"{}", tenant_id=T) == owner.body
    assert owner.calls[0] == ("memory", "GET", "/p", T, {"params": {"a": 1}})


async def test_the_owners_error_is_the_gateways_problem_with_its_members() -> None:
    owner = Owner(409, _problem(409, "memory-superseded", memory_status="superseded"))
    with pytest.raises(Problem) as raised:
        await OwnerAnswers(owner).json("memory", "POST", "/p", tenant_id=T)
    problem = raised.value
    assert (problem.status, problem.kind, problem.detail) == (409, "memory-superseded", "why")
    assert problem.extra == {"memory_status": "superseded"}, "no owner's instance path"


@pytest.mark.parametrize(
    ("status", "body", "passed"),
    [
        (500, _problem(500, "error"), (200, 404)),
        (409, _problem(409, "conflict"), (200, 404)),
        (404, b"<html>not json</html>", (200, 404)),
        (200, b"not json", (200,)),
    ],
    ids=["server-error", "status-not-passed", "unreadable-error", "unreadable-200"],
)
async def test_anything_else_is_a_503_naming_the_owner(
    status: int, body: bytes, passed: tuple[int, ...]
) -> None:
    with pytest.raises(Problem) as raised:
        await OwnerAnswers(Owner(status, body)).json(
            "extraction", "GET", "/p", tenant_id=T, passed=passed
        )
    assert raised.value.status == 503
    assert raised.value.detail == "the extraction service could not answer"
