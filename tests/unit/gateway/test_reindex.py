"""One reindex over memories and knowledge: each store's answer kept, one view over them, a
store whose service is down reported, never failing the other."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from engram_gateway.domain.reindex import combined, overall_state
from engram_gateway.service.reindex import Reindexes
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit


def _job(state: str, done: int, total: int, rate: float, eta: float | None) -> dict[str, Any]:
    return {
        "state": state,
        "embedder": "hashing",
        "done": done,
        "total": total,
        "rate": rate,
        "seconds": 2.0,
        "eta_seconds": eta,
    }


class Owners:
    """The owning services, answering from a table; a missing service is down."""

    def __init__(self, answers: dict[tuple[str, str], tuple[int, dict[str, Any]]]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, str, str, Any]] = []

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response:
        self.calls.append((service, method, path, kwargs.get("json")))
        if (service, method) not in self.answers:
            raise Problem(503, "service-unavailable", f"the {service} service is not answering")
        status, body = self.answers[(service, method)]
        return httpx.Response(status, json=body)


def test_the_overall_state_runs_while_any_store_runs() -> None:
    assert overall_state(["done", "running"]) == "running"
    assert overall_state(["done", "failed"]) == "failed"
    assert overall_state(["done", "none"]) == "done"
    assert overall_state(["unavailable", "none"]) == "none"
    view = combined(
        {"memory": _job("running", 4, 10, 2.0, 3.0), "knowledge": _job("done", 6, 6, 3.0, None)}
    )
    assert (view["state"], view["done"], view["total"], view["rate"]) == ("running", 10, 16, 5.0)
    assert view["eta_seconds"] == 3.0 and set(view["stores"]) == {"memory", "knowledge"}


async def test_one_call_starts_both_stores_with_the_same_target() -> None:
    owners = Owners(
        {
            ("memory", "POST"): (200, _job("running", 0, 10, 0.0, None)),
            ("enrichment", "POST"): (200, _job("running", 0, 7, 0.0, None)),
        }
    )
    view = await Reindexes(owners).start("t1", {"embedder": "hashing"}, ["memory", "knowledge"])
    assert view["total"] == 17 and view["state"] == "running"
    assert [(c[0], c[2], c[3]) for c in owners.calls] == [
        ("memory", "/internal/v1/reindex", {"embedder": "hashing"}),
        ("enrichment", "/internal/v1/knowledge/reindex", {"embedder": "hashing"}),
    ]


async def test_a_store_whose_service_is_down_is_reported_and_the_other_moves() -> None:
    owners = Owners({("memory", "POST"): (200, _job("running", 0, 10, 0.0, None))})
    view = await Reindexes(owners).start("t1", {"embedder": "hashing"}, ["memory", "knowledge"])
    assert view["stores"]["knowledge"] == {"state": "unavailable"}
    assert view["total"] == 10 and view["state"] == "running"


async def test_when_no_store_starts_the_first_refusal_is_the_answer() -> None:
    refused = {"type": "urn:problem:reindex-refused", "detail": "a reindex is already running"}
    owners = Owners({("memory", "POST"): (409, refused)})
    with pytest.raises(Problem) as raised:
        await Reindexes(owners).start("t1", {"embedder": "hashing"}, ["memory", "knowledge"])
    assert raised.value.status == 409 and "already running" in str(raised.value.detail)
    with pytest.raises(Problem) as down:
        await Reindexes(Owners({})).start("t1", {"embedder": "hashing"}, ["knowledge"])
    assert down.value.status == 503
