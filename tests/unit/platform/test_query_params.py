"""Every service_app route refuses query parameters it does not read, naming them (422)."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request
from fastapi.testclient import TestClient
from pydantic import AliasChoices, BaseModel, ConfigDict

from engram_platform.app import service_app
from engram_platform.problems import PROBLEM_JSON, Problem
from engram_platform.query_params import any_query_params
from engram_platform.runtime import ConnectedRuntime, Runtime
from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit

AUTH_CALLS: list[str] = []


async def paging(cursor: str | None = None, limit: int = 10) -> dict[str, Any]:
    return {"cursor": cursor, "limit": limit}


async def listing(page: Annotated[dict[str, Any], Depends(paging)], order: str = "asc") -> Any:
    """A dependency whose own dependency declares parameters too."""
    return {**page, "order": order}


async def caller(request: Request) -> str:
    """Stands in for a route's authentication."""
    AUTH_CALLS.append(request.url.path)
    if request.headers.get("authorization") != "Bearer good":
        raise Problem(401, detail="send a key")
    return "tenant"


async def region(request: Request, region: str = "eu") -> None:
    """Given only where a router is included, never named by the route."""
    request.state.region = region


class Filters(BaseModel):
    """A query model: its fields are the parameters."""

    kind: str | None = None
    tags: list[str] = []


class AnyFilters(BaseModel):
    """A query model that takes any extra name."""

    model_config = ConfigDict(extra="allow")

    kind: str | None = None


router = APIRouter()


@router.get("/items")
async def list_items(
    entity_type: Annotated[str | None, Query(alias="type")] = None,
    tag: Annotated[list[str] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> dict[str, Any]:
    return {"type": entity_type, "tag": tag, "limit": limit}


@router.get("/choices")
async def choices(
    name: Annotated[str | None, Query(validation_alias=AliasChoices("name", "n"))] = None,
) -> dict[str, Any]:
    return {"name": name}


@router.get("/listing")
async def list_nested(found: Annotated[dict[str, Any], Depends(listing)]) -> dict[str, Any]:
    return found


@router.post("/things/{thing_id}")
async def update_thing(
    thing_id: Annotated[str, Path(min_length=1)], body: Filters
) -> dict[str, Any]:
    return {"thing_id": thing_id, "kind": body.kind}


@router.delete("/things")
async def clear_things() -> dict[str, str]:
    return {"cleared": "all"}


@router.get("/secret")
async def secret(who: Annotated[str, Depends(caller)], verbose: bool = False) -> dict[str, Any]:
    return {"who": who, "verbose": verbose}


@router.get("/modelled")
async def modelled(filters: Annotated[Filters, Query()]) -> dict[str, Any]:
    return filters.model_dump()


@router.get("/open-model")
async def open_model(filters: Annotated[AnyFilters, Query()]) -> dict[str, Any]:
    return filters.model_dump()


@router.get("/callback", dependencies=[Depends(any_query_params)])
async def callback(request: Request) -> dict[str, Any]:
    return dict(request.query_params)


regional = APIRouter(prefix="/regional")


@regional.get("/here")
async def here(request: Request, day: int = 1) -> dict[str, Any]:
    return {"region": request.state.region, "day": day}


outer = APIRouter()
outer.include_router(regional, dependencies=[Depends(region)])


@pytest.fixture(scope="module")
def client() -> TestClient:
    """service_app itself (no lifespan: nothing here needs the broker or the database)."""

    async def register(runtime: ConnectedRuntime, app: FastAPI) -> None:
        return None

    runtime = Runtime.build("probe", ServiceSettings(), install_global=False)
    app = service_app(runtime, title="probe", register=register, routers=[router, outer])
    return TestClient(app)


def _refused(response: Any, kind: str = "unknown-parameter") -> dict[str, Any]:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    body: dict[str, Any] = response.json()
    assert body["type"] == f"/problems/{kind}"
    assert body["title"] == "Request validation failed"
    return body


def test_an_unknown_name_is_refused_and_named(client: TestClient) -> None:
    body = _refused(client.get("/items?bogus=u2"))
    assert "'bogus'" in body["detail"]
    assert body["errors"] == [
        {"loc": ["query", "bogus"], "msg": "unknown parameter", "type": "unknown_parameter"}
    ]
    assert body["instance"] == "/items"


def test_two_unknown_names_are_both_named(client: TestClient) -> None:
    body = _refused(client.get("/items?limit=5&zeta=1&alpha=2"))
    assert "'alpha', 'zeta'" in body["detail"]
    assert [e["loc"] for e in body["errors"]] == [["query", "alpha"], ["query", "zeta"]]


def test_declared_names_and_aliases_are_accepted(client: TestClient) -> None:
    response = client.get("/items?type=invoice&limit=5")
    assert response.status_code == 200, response.text
    assert response.json() == {"type": "invoice", "tag": None, "limit": 5}


def test_the_python_name_behind_an_alias_is_unknown(client: TestClient) -> None:
    """FastAPI reads `type`, never `entity_type`: the filter would be dropped."""
    assert "'entity_type'" in _refused(client.get("/items?entity_type=x"))["detail"]


def test_every_alias_choice_is_accepted(client: TestClient) -> None:
    assert client.get("/choices?n=a").json() == {"name": "a"}
    assert client.get("/choices?name=b").json() == {"name": "b"}
    _refused(client.get("/choices?nom=c"))


def test_a_list_parameter_may_repeat(client: TestClient) -> None:
    response = client.get("/items?tag=a&tag=b")
    assert response.status_code == 200, response.text
    assert response.json()["tag"] == ["a", "b"]


def test_a_repeated_scalar_is_refused_and_named(client: TestClient) -> None:
    body = _refused(client.get("/items?type=a&type=b"), "repeated-parameter")
    assert "'type'" in body["detail"]
    assert body["errors"] == [
        {
            "loc": ["query", "type"],
            "msg": "given more than once; send one value",
            "type": "repeated_parameter",
        }
    ]


def test_unknown_and_repeated_together_name_both(client: TestClient) -> None:
    body = _refused(client.get("/items?limit=1&limit=2&bogus=1"))
    assert [e["type"] for e in body["errors"]] == ["unknown_parameter", "repeated_parameter"]
    assert "'bogus'" in body["detail"] and "'limit'" in body["detail"]


def test_parameters_of_sub_dependencies_are_known(client: TestClient) -> None:
    response = client.get("/listing?cursor=c1&limit=3&order=desc")
    assert response.json() == {"cursor": "c1", "limit": 3, "order": "desc"}
    _refused(client.get("/listing?cursor=c1&sort=desc"))


def test_parameters_of_dependencies_given_at_inclusion_are_known(client: TestClient) -> None:
    assert client.get("/regional/here?region=us&day=2").json() == {"region": "us", "day": 2}
    _refused(client.get("/regional/here?zone=us"))


def test_path_and_body_are_unaffected_but_are_not_query_names(client: TestClient) -> None:
    response = client.post("/things/t1", json={"kind": "k"})
    assert response.json() == {"thing_id": "t1", "kind": "k"}
    body = _refused(client.post("/things/t1?thing_id=t2&kind=x", json={"kind": "k"}))
    assert [e["loc"][1] for e in body["errors"]] == ["kind", "thing_id"]


def test_a_route_without_query_parameters_refuses_any(client: TestClient) -> None:
    assert client.delete("/things").json() == {"cleared": "all"}
    assert "'user'" in _refused(client.delete("/things?user=u2"))["detail"]


def test_health_routes_are_checked_too(client: TestClient) -> None:
    assert client.get("/healthz").status_code == 200
    _refused(client.get("/healthz?verbose=1"))


def test_query_model_fields_are_the_names(client: TestClient) -> None:
    response = client.get("/modelled?kind=a&tags=x&tags=y")
    assert response.json() == {"kind": "a", "tags": ["x", "y"]}
    _refused(client.get("/modelled?filters=a"))
    _refused(client.get("/modelled?kind=a&kind=b"), "repeated-parameter")


def test_a_query_model_taking_extras_takes_any_name(client: TestClient) -> None:
    assert client.get("/open-model?kind=a&other=b").json() == {"kind": "a", "other": "b"}


def test_a_route_may_opt_out_explicitly(client: TestClient) -> None:
    assert client.get("/callback?state=s&code=c").json() == {"state": "s", "code": "c"}


def test_values_of_known_names_are_still_validated(client: TestClient) -> None:
    _refused(client.get("/items?limit=0"), "validation-error")


def test_unknown_paths_and_methods_keep_their_answers(client: TestClient) -> None:
    missing = client.get("/nowhere?bogus=1")
    assert missing.status_code == 404
    assert missing.json()["type"] == "/problems/not-found"
    wrong = client.put("/items?bogus=1")
    assert wrong.status_code == 405
    assert wrong.json()["type"] == "/problems/method-not-allowed"


def test_the_check_runs_before_the_routes_authentication(client: TestClient) -> None:
    """Chosen: the 422 reads only the request line, so it tells an anonymous caller no more
    than the OpenAPI does, and authentication (a database read) is never reached."""
    AUTH_CALLS.clear()
    _refused(client.get("/secret?bogus=1"))
    assert AUTH_CALLS == []
    assert client.get("/secret?verbose=true").status_code == 401
    ok = client.get("/secret?verbose=true", headers={"authorization": "Bearer good"})
    assert ok.json() == {"who": "tenant", "verbose": True}
    assert AUTH_CALLS == ["/secret", "/secret"]


def test_long_and_many_names_are_bounded(client: TestClient) -> None:
    names = ["a" * 300] + [f"p{i:02d}" for i in range(15)]
    body = _refused(client.delete("/things", params=dict.fromkeys(names, "1")))
    assert len(body["errors"]) == 10
    assert "and 6 more" in body["detail"]
    assert "'" + "a" * 64 + "'" in body["detail"] and "a" * 65 not in body.__repr__()
