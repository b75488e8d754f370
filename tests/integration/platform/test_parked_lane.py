"""The parked lane over the real broker and database: a tenant's transiently failing input waits
in `parked_inputs` while another tenant's input behind it in the partition is applied; the
key's later input waits behind it; a parked row outlives its consumer and the next one runs it;
attempts that run out end in the DLQ with the route's hook."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient

from engram_events import Envelope, encode, new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.memories import MemoryWriteRequested
from engram_platform.consuming.parked_store import PARKED, MongoParkedInputs
from engram_platform.runtime import ConnectedRuntime, Runtime
from engram_platform.settings import ServiceSettings
from engram_platform.topics import ensure_topics
from tests.conftest import Infra
from tests.support.kafka import produce, wait_for
from tests.support.parked import check_parked_store
from tests.support.polling import until_async

CONSUMER = "parkcheck"


class Writes:
    """A handler whose chosen agents' writes fail (as a busy dependency would), noting the
    order in which writes are applied, and the dead-letter hook's calls."""

    def __init__(self, broken: set[str]) -> None:
        self.broken = broken
        self.applied: list[str] = []
        self.failed: list[tuple[str, int]] = []

    async def handle(self, event: Envelope[MemoryWriteRequested]) -> list[Envelope[Any]]:
        if event.payload.agent_id in self.broken:
            raise RuntimeError("dependency busy")
        self.applied.append(event.payload.memory_id)
        return []

    async def dead_lettered(
        self, event: Envelope[MemoryWriteRequested], letter: DeadLetter
    ) -> list[Envelope[Any]]:
        self.failed.append((event.payload.memory_id, letter.attempts))
        return []


def settings(infra: Infra, names: dict[str, str], attempts: int) -> ServiceSettings:
    return ServiceSettings(
        kafka_bootstrap_servers=infra.bootstrap,
        mongodb_uri=infra.mongodb_uri,
        topic_prefix=names["ENGRAM_TOPIC_PREFIX"],
        database_prefix=names["ENGRAM_DATABASE_PREFIX"],
        max_attempts=attempts,
        retry_base_seconds=0.2,
        retry_max_seconds=0.4,
        parked_poll_seconds=0.2,
        metrics_enabled=False,
        tracing_enabled=False,
    )


@asynccontextmanager
async def consuming(
    infra: Infra, names: dict[str, str], writes: Writes, attempts: int
) -> AsyncIterator[ConnectedRuntime]:
    """The platform's consumer, started as a service's lifespan starts it."""
    chosen = settings(infra, names, attempts)
    await ensure_topics(infra.bootstrap, prefix=chosen.topic_prefix, partitions=1)
    runtime = Runtime.build(CONSUMER, chosen, install_global=False)
    async with runtime.connected() as connected:
        await connected.ensure_indexes()
        connected.consumer.on(
            MEMORY_WRITE_REQUESTED, writes.handle, on_dead_letter=writes.dead_lettered
        )
        connected.consumer.subscribe()
        await connected.broker.start()
        await connected.consumer.start()
        try:
            yield connected
        finally:
            await connected.consumer.stop()
            await connected.broker.stop()


def write(memory_id: str, tenant: str, agent: str) -> Envelope[MemoryWriteRequested]:
    payload = MemoryWriteRequested(memory_id=memory_id, agent_id=agent, content="hi")
    return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id=tenant)


async def publish(infra: Infra, names: dict[str, str], *events: Envelope[Any]) -> None:
    """Each write keyed by its agent, as the gateway publishes it (one partition here)."""
    topic = f"{names['ENGRAM_TOPIC_PREFIX']}engram.memories.v1"
    for event in events:
        await produce(infra.bootstrap, topic, [encode(event)], key=event.payload.agent_id.encode())


def parked_rows(infra: Infra, names: dict[str, str]) -> Any:
    client: Any = AsyncIOMotorClient(infra.mongodb_uri, tz_aware=True)
    return client[f"{names['ENGRAM_DATABASE_PREFIX']}{CONSUMER}"][PARKED]


async def test_a_parked_input_holds_only_its_key_and_survives_a_restart(
    infra: Infra, names: dict[str, str]
) -> None:
    rows = parked_rows(infra, names)
    a1, a2 = write("mem_a1", "ten_a", "agt_a"), write("mem_a2", "ten_a", "agt_a")
    b1 = write("mem_b1", "ten_b", "agt_b")
    broken = Writes({"agt_a"})
    async with consuming(infra, names, broken, attempts=100):
        await publish(infra, names, a1, a2, b1)
        await until_async(lambda: broken.applied, "tenant B's write applied", 60, 0.1)
        parked = {doc["_id"]: doc async for doc in rows.find({})}
        assert broken.applied == ["mem_b1"], "B went on while A's writes wait"
        assert set(parked) == {str(a1.event_id), str(a2.event_id)}
        assert parked[str(a1.event_id)]["status"] == "parked"
        assert parked[str(a1.event_id)]["reason"] == "RuntimeError"
        assert parked[str(a2.event_id)]["offset"] > parked[str(a1.event_id)]["offset"]
        assert parked[str(a2.event_id)]["status"] == "waiting", "never tried ahead of mem_a1"
        assert parked[str(a1.event_id)]["tenant_id"] == "ten_a"

    healed = Writes(set())
    async with consuming(infra, names, healed, attempts=100):
        await until_async(
            lambda: healed.applied,
            "the parked writes run by the new consumer",
            60,
            0.1,
            ready=lambda done: len(done) >= 2,
        )
        a3 = write("mem_a3", "ten_a", "agt_a")
        await publish(infra, names, a3)
        await until_async(
            lambda: healed.applied,
            "a later write of the key",
            60,
            0.1,
            ready=lambda done: len(done) >= 3,
        )
    assert healed.applied == ["mem_a1", "mem_a2", "mem_a3"], "the key's order held"
    assert await rows.count_documents({}) == 0


async def test_attempts_that_run_out_end_in_the_dlq_and_the_key_goes_on(
    infra: Infra, names: dict[str, str]
) -> None:
    a1, a2 = write("mem_a1", "ten_a", "agt_a"), write("mem_a2", "ten_a", "agt_a")
    writes = Writes({"agt_a"})
    async with consuming(infra, names, writes, attempts=3):
        await publish(infra, names, a1)
        await until_async(lambda: writes.failed, "mem_a1 dead-lettered", 60, 0.1)
        writes.broken.clear()
        await publish(infra, names, a2)
        await until_async(lambda: writes.applied, "the key's next write applied", 60, 0.1)
    letters = await wait_for(
        infra.bootstrap,
        f"{names['ENGRAM_TOPIC_PREFIX']}engram.dlq.v1",
        lambda m: m.get("event_id") == str(a1.event_id),
    )
    assert writes.failed == [("mem_a1", 3)] and writes.applied == ["mem_a2"]
    assert [(m["attempts"], m["error_type"], m["consumer"]) for m in letters] == [
        (3, "retries_exhausted:RuntimeError", CONSUMER)
    ]
    assert await parked_rows(infra, names).count_documents({}) == 0


async def test_the_mongo_store_keeps_the_lane_contract(infra: Infra, names: dict[str, str]) -> None:
    client: Any = AsyncIOMotorClient(infra.mongodb_uri, tz_aware=True)
    db = client[f"{names['ENGRAM_DATABASE_PREFIX']}{CONSUMER}"]
    await check_parked_store(MongoParkedInputs(db))
