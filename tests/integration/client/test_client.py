"""The typed client against a real gateway process over the real broker and database."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_client import (
    NO_RETRY,
    AsyncEngramClient,
    EngramClient,
    NotFound,
    RetryPolicy,
    ServiceUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
)
from tests.integration.client.conftest import Stack
from tests.support.tenants import create_tenant

CSV = "id,name,city\nc1,Acme Freight,Paris\nc2,Beta Lines,Oslo\n"


def test_agents_health_and_tenancy(lone_gateway: Stack) -> None:
    gateway = lone_gateway.gateway
    other_key = create_tenant(gateway.env, "other")
    with (
        EngramClient(gateway.url, lone_gateway.key) as client,
        EngramClient(gateway.url, other_key) as other,
    ):
        assert client.health().status == "ok"
        assert client.ready().checks == {"mongodb": True, "kafka": True}
        agent = client.create_agent("planner")
        assert agent.name == "planner" and agent.created_at is not None
        assert [a.agent_id for a in client.list_agents()] == [agent.agent_id]
        assert client.get_agent(agent.agent_id).agent_id == agent.agent_id
        assert other.list_agents() == []
        with pytest.raises(NotFound):
            other.get_agent(agent.agent_id)
        with pytest.raises(NotFound):
            other.delete_agent(agent.agent_id)
        client.delete_agent(agent.agent_id)
        with pytest.raises(NotFound) as gone:
            client.get_agent(agent.agent_id)
    assert gone.value.status == 404 and gone.value.type == "/problems/not-found"


def test_problems_arrive_as_typed_errors(lone_gateway: Stack) -> None:
    url = lone_gateway.gateway.url
    with EngramClient(url, "egk_0000000000000000_" + "x" * 43) as stranger:
        with pytest.raises(Unauthorized) as unauthorized:
            stranger.list_agents()
    assert unauthorized.value.status == 401 and unauthorized.value.kind == "unauthorized"

    with EngramClient(url, lone_gateway.key, retry=NO_RETRY) as client:
        with pytest.raises(ValidationFailed) as invalid:
            client.create_agent("x" * 500)
        with pytest.raises(ValidationFailed) as empty:
            client.upload_document("a.csv", "   ")
        with pytest.raises(UnsupportedMediaType):
            client.upload_document("a.bin", b"\x01\x02", mime="application/octet-stream")
        with pytest.raises(NotFound):
            client.get_prune_job("job_does_not_exist")
        with pytest.raises(ServiceUnavailable) as down:
            client.get_record("rec_1")
    assert invalid.value.errors and invalid.value.errors[0]["loc"][-1] == "name"
    assert "x" * 100 not in str(invalid.value.errors), "the rejected input is not echoed"
    assert empty.value.kind == "empty-document"
    assert down.value.status == 503


def test_a_prune_job_is_started_and_read(lone_gateway: Stack) -> None:
    with EngramClient(lone_gateway.gateway.url, lone_gateway.key) as client:
        with pytest.raises(ValidationFailed):
            client.start_prune(filter={"record_type": "carrier"})
        accepted = client.start_prune(record_ids=["rec_1", "rec_2"])
        job = client.get_prune_job(accepted.prune_job_id)
    assert accepted.status_url == f"/v1/prune-jobs/{accepted.prune_job_id}"
    assert job.prune_job_id == accepted.prune_job_id
    assert job.status == "running" and job.kind == "records"
    assert job.selector["record_ids"] == ["rec_1", "rec_2"]
    assert job.verified_empty is None


async def test_the_async_client_does_the_same(lone_gateway: Stack) -> None:
    async with AsyncEngramClient(lone_gateway.gateway.url, lone_gateway.key) as client:
        agent = await client.create_agent("async")
        assert [a.agent_id for a in await client.list_agents()] == [agent.agent_id]
        accepted = await client.start_prune(older_than_days=365)
        assert (await client.get_prune_job(accepted.prune_job_id)).status == "running"
        await client.delete_agent(agent.agent_id)
        with pytest.raises(NotFound):
            await client.delete_agent(agent.agent_id)


def test_documents_become_records_and_are_deleted(pipeline: Stack, tmp_path: Path) -> None:
    source = tmp_path / "carriers.csv"
    source.write_text(CSV)
    progress: list[str] = []
    retry = RetryPolicy(max_attempts=6, base_delay=0.2)
    with EngramClient(pipeline.gateway.url, pipeline.key, retry=retry) as client:
        uploaded = client.upload_file(source)
        assert uploaded.status == "pending" and uploaded.version
        again = client.upload_document("carriers.csv", CSV)
        assert (again.document_id, again.version) == (uploaded.document_id, uploaded.version)
        notes = client.upload_document("notes.md", b"# Notes\nAcme ships on Fridays.\n")

        document = client.wait_for_document(
            uploaded.document_id, 90, on_progress=lambda d: progress.append(d.status)
        )
        assert document.status == "extracted", document.error
        assert document.record_count == 2 and document.name == "carriers.csv"
        assert progress[-1] == "extracted"
        assert client.wait_for_document(notes.document_id, 90).status in {"extracted", "failed"}

        records = list(client.iter_records(document_id=uploaded.document_id, page_size=1))
        assert sorted(r.entity_id or "" for r in records) == ["carrier:c1", "carrier:c2"]
        record = client.get_record(records[0].record_id)
        assert record.lineage is not None
        assert record.lineage.document_id == uploaded.document_id
        assert record.revisions and record.revisions[0].revision == 1

        imported = client.import_records(
            "depot", [{"id": "d1", "city": "Lyon"}], source="depots-sheet", idempotency_key="k-1"
        )
        repeated = client.import_records(
            "depot", [{"id": "d1", "city": "Lyon"}], source="depots-sheet", idempotency_key="k-1"
        )
        assert repeated.import_id == imported.import_id
        assert client.get_import(imported.import_id).import_id == imported.import_id

        deleting = client.delete_document(uploaded.document_id)
        job = client.get_prune_job(deleting.prune_job_id)
        assert job.kind == "document" and job.selector["document_id"] == uploaded.document_id
        with pytest.raises(NotFound):
            client.get_document("doc_000000000000000000000000")
