"""Pagination follows the cursor the API returns; wait helpers poll to a final state or time out."""

from __future__ import annotations

from typing import Any

import pytest

from engram_client import EngramClient, WaitTimeout
from tests.unit.client.stub import Reply, StubServer, problem

pytestmark = pytest.mark.unit


def _record(n: int) -> dict[str, Any]:
    return {"record_id": f"rec_{n}", "record_type": "carrier", "entity_id": f"carrier:c{n}"}


def test_iter_records_follows_next_cursor_to_the_end(stub: StubServer) -> None:
    stub.on(
        "GET",
        "/v1/records",
        Reply(200, {"records": [_record(1), _record(2)], "next_cursor": "c-2"}),
        Reply(200, {"records": [_record(3)], "next_cursor": "c-3"}),
        Reply(200, {"records": [], "next_cursor": None}),
    )
    with EngramClient(stub.url, "egk_test") as client:
        ids = [r.record_id for r in client.iter_records(type="carrier", page_size=2)]
    assert ids == ["rec_1", "rec_2", "rec_3"]
    cursors = [r.query.get("cursor") for r in stub.requests]
    assert cursors == [None, ["c-2"], ["c-3"]]
    assert all(r.query["type"] == ["carrier"] and r.query["limit"] == ["2"] for r in stub.requests)


def test_iter_memories_uses_the_cross_agent_listing_without_an_agent(stub: StubServer) -> None:
    memory = {"memory_id": "mem_1", "status": "active", "content": "x"}
    stub.on("GET", "/v1/memories", Reply(200, {"memories": [memory], "next_cursor": None}))
    with EngramClient(stub.url, "egk_test") as client:
        found = list(client.iter_memories(search="a.b*", status="active"))
    assert [m.memory_id for m in found] == ["mem_1"]
    assert stub.requests[0].query == {"search": ["a.b*"], "status": ["active"]}


def test_iter_entities_follows_next_after(stub: StubServer) -> None:
    stub.on(
        "GET",
        "/v1/knowledge/entities",
        Reply(200, {"entities": [{"entity_id": "carrier:c1"}], "next_after": "carrier:c1"}),
        Reply(200, {"entities": [{"entity_id": "carrier:c2"}], "next_after": None}),
    )
    with EngramClient(stub.url, "egk_test") as client:
        found = [e["entity_id"] for e in client.iter_entities(type="carrier")]
    assert found == ["carrier:c1", "carrier:c2"]
    assert stub.requests[1].query["after"] == ["carrier:c1"]


def test_wait_for_document_reports_progress_until_extracted(stub: StubServer) -> None:
    stub.on(
        "GET",
        "/v1/documents/doc_1",
        Reply(200, {"document_id": "doc_1", "status": "pending"}),
        Reply(200, {"document_id": "doc_1", "status": "pending"}),
        Reply(200, {"document_id": "doc_1", "status": "extracted", "record_count": 2}),
    )
    seen: list[str] = []
    with EngramClient(stub.url, "egk_test") as client:
        done = client.wait_for_document(
            "doc_1", 10, interval=0.01, on_progress=lambda d: seen.append(d.status)
        )
    assert done.status == "extracted" and done.record_count == 2
    assert seen == ["pending", "pending", "extracted"]


def test_wait_for_memory_treats_an_early_404_as_pending(stub: StubServer) -> None:
    path = "/v1/agents/agt_1/memories/mem_1"
    stub.on(
        "GET",
        path,
        problem(404, "not-found"),
        Reply(200, {"memory_id": "mem_1", "status": "pending"}),
        Reply(200, {"memory_id": "mem_1", "status": "active"}),
    )
    with EngramClient(stub.url, "egk_test") as client:
        memory = client.wait_for_memory("agt_1", "mem_1", 10, interval=0.01)
    assert memory.status == "active"


def test_wait_for_prune_job_returns_the_completed_job(stub: StubServer) -> None:
    stub.on(
        "GET",
        "/v1/prune-jobs/job_1",
        Reply(200, {"prune_job_id": "job_1", "status": "running"}),
        Reply(200, {"prune_job_id": "job_1", "status": "completed", "verified_empty": True}),
    )
    with EngramClient(stub.url, "egk_test") as client:
        job = client.wait_for_prune_job("job_1", 10, interval=0.01)
    assert job.status == "completed" and job.verified_empty is True


def test_a_wait_that_never_finishes_times_out(stub: StubServer) -> None:
    stub.on(
        "GET", "/v1/prune-jobs/job_1", Reply(200, {"prune_job_id": "job_1", "status": "running"})
    )
    with EngramClient(stub.url, "egk_test") as client:
        with pytest.raises(WaitTimeout, match="job_1"):
            client.wait_for_prune_job("job_1", 0.1, interval=0.02)
