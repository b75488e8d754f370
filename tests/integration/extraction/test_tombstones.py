"""Extraction's part of a prune: one selection, typed tombstones, Kafka tombstones, no resurrection."""

from __future__ import annotations

from typing import Any

from tests.conftest import Infra
from tests.integration.extraction.conftest import Pipeline
from tests.support.kafka import produce, read_all, wait_for

CSV = "id,name,city\nc1,Acme,Gdansk\nc2,Borealis,Oslo\nc3,Cirrus,Riga\n"
MARKER_CSV = "type,id,city\ndepot,d1,Tallinn\n"
"""A later document on the same (single-partition) topic: once its records are announced,
extraction has handled everything before it."""


def _upserted_from(message: dict[str, Any] | None) -> str | None:
    """The document a record.upserted event came from (None for any other message)."""
    if not message or message.get("event_type") != "record.upserted":
        return None
    return str(message["payload"]["lineage"]["document_id"])


async def test_a_prune_tombstones_exactly_its_selection(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    prefix = names["ENGRAM_TOPIC_PREFIX"]
    doc = await pipeline.submit("carriers.csv", CSV)
    await pipeline.document_when(doc["document_id"], lambda d: d["status"] == "extracted")
    records = {r["entity_id"]: r["record_id"] for r in await pipeline.records(type="carrier")}
    doomed = [records["carrier:c1"], records["carrier:c3"]]

    started = await pipeline.client.post("/v1/prune", json={"record_ids": [*doomed, "rec_unknown"]})
    assert started.status_code == 202
    job = started.json()["prune_job_id"]
    acks = await wait_for(
        infra.bootstrap,
        f"{prefix}engram.tombstones.v1",
        lambda m: m.get("payload", {}).get("service") == "extraction",
    )
    tombstones = await wait_for(
        infra.bootstrap,
        f"{prefix}engram.record-events.v1",
        lambda m: m.get("event_type") == "record.tombstoned",
        count=2,
    )
    assert acks[0]["payload"]["prune_job_id"] == job
    assert sorted(acks[0]["payload"]["tombstoned_ids"]) == sorted(doomed)
    assert acks[0]["payload"]["counts"] == {"records": 2}
    assert sorted(t["payload"]["record_id"] for t in tombstones) == sorted(doomed)
    assert all(t["payload"]["reason"] == "prune" for t in tombstones)
    assert all(len(t["payload"]["content_sha256"]) == 64 for t in tombstones)

    compacted = await read_all(infra.bootstrap, f"{prefix}engram.records.v1", settle=2.0)
    assert compacted.count(None) == 2, "a null-valued Kafka tombstone per record"

    gone = await pipeline.client.get(f"/v1/records/{doomed[0]}")
    kept = await pipeline.client.get(f"/v1/records/{records['carrier:c2']}")
    assert kept.json()["status"] == "active"
    assert gone.status_code == 404 or gone.json()["status"] == "tombstoned"
    assert "attributes" not in gone.json() or not gone.json()["attributes"]

    again = await pipeline.client.post("/v1/prune", json={"record_ids": doomed})
    second = again.json()["prune_job_id"]
    replay = await wait_for(
        infra.bootstrap,
        f"{prefix}engram.tombstones.v1",
        lambda m: m.get("payload", {}).get("prune_job_id") == second,
    )
    assert replay[0]["payload"]["counts"] == {"records": 0}, "already tombstoned: nothing selected"


async def test_a_late_replay_of_the_document_does_not_resurrect_records(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    prefix = names["ENGRAM_TOPIC_PREFIX"]
    doc = await pipeline.submit("carriers.csv", CSV)
    await pipeline.document_when(doc["document_id"], lambda d: d["status"] == "extracted")
    ingested = [
        m
        for m in await read_all(infra.bootstrap, f"{prefix}engram.documents.v1")
        if m and m.get("event_type") == "document.ingested"
    ]
    deleted = await pipeline.client.delete(f"/v1/documents/{doc['document_id']}")
    assert deleted.status_code == 202
    await wait_for(
        infra.bootstrap,
        f"{prefix}engram.record-events.v1",
        lambda m: m.get("event_type") == "record.tombstoned",
        count=3,
    )
    import json
    import uuid

    late = dict(ingested[0])
    late["event_id"] = str(uuid.uuid4())
    await produce(infra.bootstrap, f"{prefix}engram.documents.v1", [json.dumps(late).encode()])
    marker = await pipeline.submit("depots.csv", MARKER_CSV)
    await wait_for(
        infra.bootstrap,
        f"{prefix}engram.record-events.v1",
        lambda m: _upserted_from(m) == marker["document_id"],
    )
    events = await read_all(infra.bootstrap, f"{prefix}engram.record-events.v1")
    upserts = [m for m in events if m and _upserted_from(m) not in (None, marker["document_id"])]
    assert len(upserts) == 3, "the late replay announced nothing"
    live = [r for r in await pipeline.records(type="carrier") if r.get("status") != "tombstoned"]
    assert live == []


async def test_a_prune_request_replayed_after_its_markers_were_written_announces_them_again(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    """The crash window between the markers' write and the outbox: a replay re-announces them.

    Found by the chaos test: a `kill -9` of extraction right after it tombstoned the records
    made the redelivered `prune.requested` select nothing (the records were already
    tombstoned), so the job's acknowledgement named no records and verification checked none.
    """
    import json

    from pymongo import MongoClient

    prefix = names["ENGRAM_TOPIC_PREFIX"]
    doc = await pipeline.submit("carriers.csv", CSV)
    await pipeline.document_when(doc["document_id"], lambda d: d["status"] == "extracted")
    records = {r["entity_id"]: r["record_id"] for r in await pipeline.records(type="carrier")}
    doomed = sorted([records["carrier:c1"], records["carrier:c3"]])
    started = await pipeline.client.post("/v1/prune", json={"record_ids": doomed})
    job = started.json()["prune_job_id"]

    def extraction_ack(m: dict[str, Any]) -> bool:
        payload = m.get("payload", {})
        return payload.get("service") == "extraction" and payload.get("prune_job_id") == job

    first = await wait_for(infra.bootstrap, f"{prefix}engram.tombstones.v1", extraction_ack)
    requested = await wait_for(
        infra.bootstrap,
        f"{prefix}engram.prune.v1",
        lambda m: m.get("payload", {}).get("prune_job_id") == job,
    )
    # As if extraction died after writing the markers and before marking the request applied.
    database = f"{names['ENGRAM_DATABASE_PREFIX']}extraction"
    with MongoClient[dict[str, Any]](infra.mongodb_uri) as mongo:
        forgotten = mongo[database]["applied_events"].delete_one(
            {"_id": f"extraction:{requested[0]['event_id']}"}
        )
    assert forgotten.deleted_count == 1
    await produce(infra.bootstrap, f"{prefix}engram.prune.v1", [json.dumps(requested[0]).encode()])

    acks = await wait_for(infra.bootstrap, f"{prefix}engram.tombstones.v1", extraction_ack, count=2)
    assert acks[1]["event_id"] == first[0]["event_id"], "the same acknowledgement, deduped"
    assert sorted(acks[1]["payload"]["tombstoned_ids"]) == doomed
    assert acks[1]["payload"]["counts"] == {"records": 2}
    tombstones = await wait_for(
        infra.bootstrap,
        f"{prefix}engram.record-events.v1",
        lambda m: m.get("event_type") == "record.tombstoned",
        count=4,
    )
    assert sorted(t["payload"]["record_id"] for t in tombstones) == sorted(doomed * 2)
    assert len({t["event_id"] for t in tombstones}) == 2, "re-announced with the same event ids"
