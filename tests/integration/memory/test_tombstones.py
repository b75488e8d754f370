"""Tombstones cascade to memories: the vector goes, the row keeps hashes, the prune job hears."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from pymongo import MongoClient

from engram_events import encode, new_event
from engram_events.catalog import (
    DOCUMENT_TOMBSTONED,
    FACT_WITHDRAWN,
    MEMORY_WRITE_REQUESTED,
    RECORD_TOMBSTONED,
)
from engram_events.payloads.documents import DocumentTombstoned
from engram_events.payloads.knowledge import FactWithdrawn
from engram_events.payloads.memories import MemoryWriteRequested
from engram_events.payloads.records import RecordTombstoned
from tests.integration.memory.conftest import MemoryStack, new_agent, topic, wait_status, write
from tests.support.internal import internal_headers
from tests.support.kafka import produce, read_all, wait_for
from tests.support.tenants import tenant_of


async def queue_write(
    stack: MemoryStack, tenant_id: str, agent: str, content: str, derived: list[str]
) -> str:
    """A write request put on Kafka as the gateway would, naming sources no service here holds
    (the gateway refuses those; this test is about memory's cascade, not the gateway)."""
    memory_id = f"mem_{uuid.uuid4().hex}"
    write = MemoryWriteRequested(
        memory_id=memory_id, agent_id=agent, content=content, derived_from=derived
    )
    await produce(
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.memories.v1"),
        [encode(new_event(MEMORY_WRITE_REQUESTED, write, tenant_id=tenant_id))],
        key=agent.encode(),
    )
    return memory_id


async def test_gone_sources_withdraw_derived_memories(stack: MemoryStack) -> None:
    key = stack.tenant()
    tenant_id = tenant_of(stack.env, key)
    with stack.client(key) as client:
        agent = new_agent(client)

        async def derived(content: str, *sources: str) -> str:
            return await queue_write(stack, tenant_id, agent, content, list(sources))

        from_record = await derived("made from record one", "rec-1")
        from_second = await derived("made from record two", "rec-2")
        from_fact = await derived("made from a fact", "fact-9")
        from_doc = await derived("made from a document", "doc-3", "rec-7")
        keep = write(client, agent, "made from nothing that goes")
        for memory_id in (from_record, from_second, from_fact, from_doc, keep):
            wait_status(client, agent, memory_id, {"active"})
        tenant = client.get("/v1/memories").json()["memories"][0]
        before = _verify(stack, tenant_id, records=["rec-1", "rec-2", "rec-x"], facts=["fact-9"])
        assert before == {"records": 2, "facts": 1, "documents": 0}, "live memories are counted"
        events: list[tuple[str, Any]] = [
            (
                "engram.record-events.v1",
                [
                    new_event(
                        RECORD_TOMBSTONED,
                        RecordTombstoned(
                            record_id=record_id,
                            reason="prune",
                            prune_job_id="prj_test1",
                            content_sha256="0" * 64,
                            last_revision=1,
                        ),
                        tenant_id=tenant_id,
                    )
                    for record_id in ("rec-1", "rec-2")
                ],
            ),
            (
                "engram.knowledge.v1",
                [
                    new_event(
                        FACT_WITHDRAWN,
                        FactWithdrawn(fact_id="fact-9", entity_id="carrier:c1", attribute="name"),
                        tenant_id=tenant_id,
                    )
                ],
            ),
            (
                "engram.documents.v1",
                [
                    new_event(
                        DOCUMENT_TOMBSTONED,
                        DocumentTombstoned(
                            document_id="doc-3", reason="user_deleted", prune_job_id="prj_test2"
                        ),
                        tenant_id=tenant_id,
                    )
                ],
            ),
        ]
        for base, batch in events:
            await produce(
                stack.env["KAFKA_BOOTSTRAP_SERVERS"],
                topic(stack, base),
                [encode(event) for event in batch],
            )
        for memory_id in (from_record, from_second, from_fact, from_doc):
            row = wait_status(client, agent, memory_id, {"withdrawn"})
            assert "content" not in row and row["content_sha256"]
            assert row["withdrawn_reason"] == "source_tombstoned"
        assert client.get(f"/v1/agents/{agent}/memories/{keep}").json()["status"] == "active"
        rows = MongoClient[dict[str, Any]](stack.env["MONGODB_URI"])[
            f"{stack.env['ENGRAM_DATABASE_PREFIX']}memory"
        ]["memories"]
        because = {
            row["memory_id"]: row["withdrawn_because_of"]
            for row in rows.find({"tenant_id": tenant_id, "status": "withdrawn"})
        }
        assert because == {
            from_record: "rec-1",
            from_second: "rec-2",
            from_fact: "fact-9",
            from_doc: "doc-3",
        }
        recalled = client.post(
            f"/v1/agents/{agent}/recall", json={"query": "made from", "min_score": -1, "top_k": 10}
        ).json()
        assert [r["memory_id"] for r in recalled["results"]] == [keep]
    assert tenant["agent_id"] == agent
    bootstrap, acks_topic = (
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.tombstones.v1"),
    )
    for job, source in (("prj_test1", "rec-2"), ("prj_test2", "doc-3")):
        await wait_for(bootstrap, acks_topic, lambda m, j=job, s=source: _acks(m, j, s))
    acks = [m for m in await read_all(bootstrap, acks_topic) if m and _acks(m)]
    by_job = merged_by_job([m["payload"] for m in acks])
    assert by_job["prj_test1"]["service"] == "memory"
    assert by_job["prj_test1"]["source_ids"] == ["rec-1", "rec-2"]
    assert by_job["prj_test1"]["tombstoned_ids"] == sorted([from_record, from_second])
    assert by_job["prj_test1"]["counts"] == {"memories": 2, "vectors": 2}
    assert by_job["prj_test2"]["tombstoned_ids"] == [from_doc]
    after = _verify(
        stack, tenant_id, records=["rec-1", "rec-2"], facts=["fact-9"], documents=["doc-3"]
    )
    assert after == {"records": 0, "facts": 0, "documents": 0}


def _verify(stack: MemoryStack, tenant_id: str, **ids: list[str]) -> dict[str, int]:
    """The memory service's count of live memories still deriving from each kind of id."""
    response = httpx.post(
        f"{stack.memory.url}/internal/v1/prune/verify",
        json=ids,
        headers=internal_headers(tenant_id),
    )
    assert response.status_code == 200, response.text
    return dict(response.json()["references"])


def _acks(message: dict[str, Any], job: str | None = None, source: str | None = None) -> bool:
    """A `tombstone.applied`, of one job and naming one source when asked."""
    if message.get("event_type") != "tombstone.applied":
        return False
    payload = message["payload"]
    return (job is None or payload["prune_job_id"] == job) and (
        source is None or source in payload["source_ids"]
    )


def merged_by_job(acks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Acknowledgements folded per job, however the consumer's batches split them."""
    jobs: dict[str, dict[str, Any]] = {}
    for ack in acks:
        job = jobs.setdefault(
            ack["prune_job_id"],
            {"service": ack["service"], "source_ids": [], "tombstoned_ids": [], "counts": {}},
        )
        job["source_ids"] = sorted(job["source_ids"] + ack["source_ids"])
        job["tombstoned_ids"] = sorted(job["tombstoned_ids"] + ack["tombstoned_ids"])
        for stage, n in ack["counts"].items():
            job["counts"][stage] = job["counts"].get(stage, 0) + n
    return jobs
