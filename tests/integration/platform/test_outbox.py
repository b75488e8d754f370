"""The outbox relay publishes in staged order, once per staged batch, including null tombstones."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.partitioner import DefaultPartitioner
from motor.motor_asyncio import AsyncIOMotorClient

from engram_events import Topics, new_event
from engram_events.catalog import TOMBSTONE_APPLIED
from engram_events.payloads.tombstones import TombstoneApplied
from engram_platform.outbox import MARKERS, OUTBOX, PENDING_FIELD, Outbox, parcel_entries
from engram_platform.runtime import Runtime
from engram_platform.settings import ServiceSettings
from engram_platform.topics import ensure_topics
from tests.conftest import Infra


async def _consumed(bootstrap: str, topic: str, expected: int) -> list[Any]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    seen: list[Any] = []
    try:
        for _ in range(50):
            for batch in (await consumer.getmany(timeout_ms=200)).values():
                seen.extend(batch)
            if len(seen) >= expected:
                break
    finally:
        await consumer.stop()
    return seen


async def _records(
    bootstrap: str, topic: str, expected: int
) -> list[tuple[bytes | None, bytes | None]]:
    return [(r.key, r.value) for r in await _consumed(bootstrap, topic, expected)]


def _settings(infra: Infra, names: dict[str, str]) -> ServiceSettings:
    return ServiceSettings(
        kafka_bootstrap_servers=infra.bootstrap,
        mongodb_uri=infra.mongodb_uri,
        topic_prefix=names["ENGRAM_TOPIC_PREFIX"],
        database_prefix=names["ENGRAM_DATABASE_PREFIX"],
    )


async def test_relay_publishes_in_order_and_sends_null_tombstones(
    infra: Infra, names: dict[str, str]
) -> None:
    settings = _settings(infra, names)
    await ensure_topics(infra.bootstrap, prefix=settings.topic_prefix)
    runtime = Runtime.build("outboxtest", settings, install_global=False)
    async with runtime.connected() as connected:
        await connected.broker.start()
        try:
            acks = [
                new_event(
                    TOMBSTONE_APPLIED,
                    TombstoneApplied(prune_job_id="job", service=f"s{i}", counts={"records": i}),
                    tenant_id="tnt_1",
                )
                for i in range(20)
            ]
            await connected.outbox.stage(acks)
            tomb = connected.outbox.tombstone_entry(Topics.RECORDS, "rec_1", "tomb-rec_1")
            await connected.outbox.stage_entries([tomb, tomb])
            await connected.outbox.stage_entries([tomb])
            await connected.outbox.stage(acks)
            sent = await connected.relay.publish_pending()
            assert sent == 21
            assert await connected.relay.publish_pending() == 0
        finally:
            await connected.broker.stop()
    prefix = settings.topic_prefix
    published = await _records(infra.bootstrap, f"{prefix}{Topics.TOMBSTONES}", 20)
    services = [value.split(b'"service":"')[1].split(b'"')[0] for _, value in published if value]
    assert services == [f"s{i}".encode() for i in range(20)], "one key, so one partition, in order"
    assert await _records(infra.bootstrap, f"{prefix}{Topics.RECORDS}", 1) == [(b"rec_1", None)]


async def test_relay_puts_each_key_on_the_partition_send_would_choose_in_order(
    infra: Infra, names: dict[str, str]
) -> None:
    settings = _settings(infra, names)
    await ensure_topics(infra.bootstrap, prefix=settings.topic_prefix, partitions=3)
    jobs = [f"job{k}" for k in range(12)]
    acks = [
        new_event(
            TOMBSTONE_APPLIED,
            TombstoneApplied(prune_job_id=jobs[i % 12], service=f"s{i}", counts={"records": i}),
            tenant_id="tnt_1",
        )
        for i in range(600)
    ]
    runtime = Runtime.build("outboxtest", settings, install_global=False)
    async with runtime.connected() as connected:
        await connected.broker.start()
        try:
            await connected.outbox.stage(acks)
            assert await connected.relay.publish_pending() == 600
        finally:
            await connected.broker.stop()
    published = await _consumed(infra.bootstrap, f"{settings.topic_prefix}{Topics.TOMBSTONES}", 600)
    assert len(published) == 600
    keys = {TOMBSTONE_APPLIED.key(a.payload).encode() for a in acks}
    where = {key: DefaultPartitioner()(key, [0, 1, 2], [0, 1, 2]) for key in keys}
    assert len(set(where.values())) > 1, "the keys spread over partitions"
    for record in published:
        assert record.partition == where[record.key]
        assert dict(record.headers)["event_type"] == b"tombstone.applied"
    for key in keys:
        services = [json.loads(r.value)["payload"]["service"] for r in published if r.key == key]
        expected = [
            a.payload.service for a in acks if TOMBSTONE_APPLIED.key(a.payload).encode() == key
        ]
        assert services == expected, "a key's events arrive in staging order"


class _CrashBeforeStaging(Outbox):
    """Dies where a process could: after the document write, before its events are staged."""

    async def stage_entries(self, docs: list[dict[str, Any]]) -> int:
        raise RuntimeError("crashed")


def _ack(n: int) -> Any:
    return new_event(
        TOMBSTONE_APPLIED,
        TombstoneApplied(prune_job_id="job", service=f"s{n}", counts={"records": n}),
        tenant_id="tnt_1",
    )


async def test_events_embedded_by_a_crashed_write_are_recovered_from_its_marker(
    infra: Infra, names: dict[str, str]
) -> None:
    client: AsyncIOMotorClient[dict[str, Any]] = AsyncIOMotorClient(
        infra.mongodb_uri, tz_aware=True
    )
    db = client[f"{names['ENGRAM_DATABASE_PREFIX']}outboxmarkers"]
    jobs = db["jobs"]
    try:
        with pytest.raises(RuntimeError):
            await _CrashBeforeStaging(db).write_with_events(
                jobs, "job_1", {"$set": {"status": "running"}}, [_ack(1)]
            )
        await _CrashBeforeStaging(db).write_many_with_events(jobs, [])
        stranded = await jobs.find_one({"_id": "job_1"})
        assert stranded is not None and len(stranded[PENDING_FIELD]) == 1, "staged in the write"
        assert await db[MARKERS].count_documents({}) == 1

        restarted = Outbox(db)
        assert await restarted.recover([jobs]) == 1
        recovered = await jobs.find_one({"_id": "job_1"})
        assert recovered is not None and recovered[PENDING_FIELD] == {}
        assert recovered["status"] == "running"
        staged = [
            e["_id"] for p in await db[OUTBOX].find({}).to_list(None) for e in parcel_entries(p)
        ]
        assert staged == list(stranded[PENDING_FIELD])
        assert await db[MARKERS].count_documents({}) == 1, "young: its writer may still be alive"

        await db[MARKERS].update_many({}, {"$set": {"created": time.time() - 120}})
        assert await Outbox(db).recover([jobs]) == 0
        assert await db[MARKERS].count_documents({}) == 0

        await restarted.write_many_with_events(
            jobs,
            [("job_2", {"$set": {"n": 2}}, [_ack(2)]), ("job_3", {"$set": {"n": 3}}, [_ack(3)])],
        )
        assert await db[MARKERS].count_documents({}) == 0
        written = await jobs.find({"_id": {"$in": ["job_2", "job_3"]}}).to_list(None)
        assert [(d["n"], d[PENDING_FIELD]) for d in sorted(written, key=lambda d: d["n"])] == [
            (2, {}),
            (3, {}),
        ], "moved to the outbox and removed from the documents"
        assert await db[OUTBOX].count_documents({}) == 3
    finally:
        client.close()


async def test_the_bulk_lanes_events_go_over_a_producer_of_their_own_in_order(
    infra: Infra, names: dict[str, str]
) -> None:
    """A single write's event never queues behind a bulk load's produce request in flight:
    the bulk lane's topics have their own producer, and each topic's order holds."""
    settings = _settings(infra, names)
    prefix = settings.topic_prefix
    await ensure_topics(infra.bootstrap, prefix=prefix)
    runtime = Runtime.build("lanestest", settings, install_global=False)
    bulk_topic = f"{prefix}{Topics.MEMORIES_BULK.value}"
    single_topic = f"{prefix}{Topics.MEMORIES.value}"
    async with runtime.connected() as connected:
        await connected.broker.start()
        try:
            sender = connected.broker.sender
            bulk, single = await sender.producer_for(bulk_topic), sender.producer_for(single_topic)
            assert bulk is not await single
            assert await sender.producer_for(f"{prefix}{Topics.EMBEDDINGS_BULK.value}") is bulk

            def entry(topic: str, n: int) -> dict[str, Any]:
                return {
                    "_id": f"{topic}-{n}",
                    "topic": topic,
                    "key": "agt_1",
                    "value": json.dumps({"n": n}).encode(),
                    "event_type": "test.lanes",
                    "headers": {},
                }

            await sender.send([entry(bulk_topic, n) for n in range(300)] + [entry(single_topic, 0)])
            await sender.send([entry(single_topic, 1), entry(bulk_topic, 300)])
        finally:
            await connected.broker.stop()
    bulk_seen = [
        json.loads(v or b"")["n"] for _, v in await _records(infra.bootstrap, bulk_topic, 301)
    ]
    single_seen = [
        json.loads(v or b"")["n"] for _, v in await _records(infra.bootstrap, single_topic, 2)
    ]
    assert bulk_seen == list(range(301)) and single_seen == [0, 1]
