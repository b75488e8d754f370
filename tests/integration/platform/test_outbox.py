"""The outbox relay publishes in staged order, once per staged batch, including null tombstones."""

from __future__ import annotations

from aiokafka import AIOKafkaConsumer

from engram_events import Topics, new_event
from engram_events.catalog import TOMBSTONE_APPLIED
from engram_events.payloads.tombstones import TombstoneApplied
from engram_platform.runtime import Runtime
from engram_platform.settings import ServiceSettings
from engram_platform.topics import ensure_topics
from tests.conftest import Infra


async def _records(
    bootstrap: str, topic: str, expected: int
) -> list[tuple[bytes | None, bytes | None]]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    seen: list[tuple[bytes | None, bytes | None]] = []
    try:
        for _ in range(50):
            for batch in (await consumer.getmany(timeout_ms=200)).values():
                seen.extend((r.key, r.value) for r in batch)
            if len(seen) >= expected:
                break
    finally:
        await consumer.stop()
    return seen


async def test_relay_publishes_in_order_and_sends_null_tombstones(
    infra: Infra, names: dict[str, str]
) -> None:
    settings = ServiceSettings(
        kafka_bootstrap_servers=infra.bootstrap,
        mongodb_uri=infra.mongodb_uri,
        topic_prefix=names["ENGRAM_TOPIC_PREFIX"],
        database_prefix=names["ENGRAM_DATABASE_PREFIX"],
    )
    await ensure_topics(infra.bootstrap, prefix=settings.topic_prefix)
    runtime = Runtime.build("outboxtest", settings, install_global=False)
    async with runtime.connected():
        assert runtime.outbox is not None and runtime.relay is not None
        await runtime.broker.start()
        try:
            acks = [
                new_event(
                    TOMBSTONE_APPLIED,
                    TombstoneApplied(prune_job_id="job", service=f"s{i}", counts={"records": i}),
                    tenant_id="tnt_1",
                )
                for i in range(20)
            ]
            await runtime.outbox.stage(acks)
            tomb = runtime.outbox.tombstone_entry(Topics.RECORDS, "rec_1", "tomb-rec_1")
            await runtime.outbox.stage_entries([tomb, tomb])
            await runtime.outbox.stage_entries([tomb])
            await runtime.outbox.stage(acks)
            sent = await runtime.relay.publish_pending()
            assert sent == 21
            assert await runtime.relay.publish_pending() == 0
        finally:
            await runtime.broker.stop()
    prefix = settings.topic_prefix
    published = await _records(infra.bootstrap, f"{prefix}{Topics.TOMBSTONES}", 20)
    services = [value.split(b'"service":"')[1].split(b'"')[0] for _, value in published if value]
    assert services == [f"s{i}".encode() for i in range(20)], "one key, so one partition, in order"
    assert await _records(infra.bootstrap, f"{prefix}{Topics.RECORDS}", 1) == [(b"rec_1", None)]
