"""Lineage from one id: the kind of id picks the owning service, a record's facts and the
memories derived from either are gathered, and an owner's 404 or failure is the caller's."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from engram_gateway.service.lineage import Lineage
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

Answer = tuple[int, dict[str, Any]]


class Owners:
    """The owning services, answering from a table by (service, path); anything else is 404."""

    def __init__(self, answers: dict[tuple[str, str], Answer]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, str, str, str, Any]] = []

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response:
        self.calls.append((service, method, path, tenant_id, kwargs.get("json")))
        status, body = self.answers.get((service, path), (404, {}))
        return httpx.Response(status, json=body)


async def test_a_record_derives_its_facts_and_the_memories_resting_on_either() -> None:
    owners = Owners(
        {
            ("extraction", "/internal/v1/records/rec_1"): (
                200,
                {"status": "active", "lineage": {"document_id": "doc_9"}},
            ),
            ("enrichment", "/internal/v1/lineage/facts"): (
                200,
                {"facts": [{"fact_id": "t:e:a:1"}]},
            ),
            ("memory", "/internal/v1/lineage/derived"): (200, {"memories": [{"id": "mem_5"}]}),
        }
    )

    found = await Lineage(owners).follow("tenant-a", "rec_1")

    assert found["kind"] == "record" and found["status"] == "active"
    assert found["derives_from"] == {"lineage": {"document_id": "doc_9"}}
    assert found["derives"] == {"facts": [{"fact_id": "t:e:a:1"}], "memories": [{"id": "mem_5"}]}
    asked_memory = [c for c in owners.calls if c[0] == "memory"]
    assert asked_memory == [
        (
            "memory",
            "POST",
            "/internal/v1/lineage/derived",
            "tenant-a",
            {"ids": ["rec_1", "t:e:a:1"]},
        )
    ]
    assert {c[3] for c in owners.calls} == {"tenant-a"}


async def test_a_memory_names_what_it_derives_from() -> None:
    owners = Owners(
        {
            ("memory", "/internal/v1/lineage/memories/mem_1"): (
                200,
                {"status": "active", "agent_id": "agt_1", "derived_from": ["rec_1"]},
            )
        }
    )

    found = await Lineage(owners).follow("tenant-a", "mem_1")

    assert found == {
        "id": "mem_1",
        "kind": "memory",
        "status": "active",
        "agent_id": "agt_1",
        "derives_from": {"ids": ["rec_1"]},
    }


async def test_an_id_no_owner_knows_is_404_and_an_unknown_kind_422() -> None:
    with pytest.raises(Problem) as missing:
        await Lineage(Owners({})).follow("tenant-a", "mem_gone")
    assert missing.value.status == 404

    with pytest.raises(Problem) as odd:
        await Lineage(Owners({})).follow("tenant-a", "banana")
    assert (odd.value.status, odd.value.kind) == (422, "unknown-id-kind")


async def test_an_owner_that_fails_is_503_naming_it() -> None:
    owners = Owners({("ingest", "/internal/v1/documents/doc_1"): (500, {})})

    with pytest.raises(Problem) as failed:
        await Lineage(owners).follow("tenant-a", "doc_1")

    assert failed.value.status == 503 and "ingest" in failed.value.detail
