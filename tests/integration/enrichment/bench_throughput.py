"""Enrichment throughput and upsert-to-article latency over the running broker and database.

Run: `python -m tests.integration.enrichment.bench_throughput RECORDS RECORDS_PER_ENTITY` with
KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI exported. Embedding is excluded (no embedding service
runs; the requests are only staged), so the figure is facts derived per second.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from aiokafka import AIOKafkaProducer
from pymongo import MongoClient

from engram_events import encode
from tests.support.services import ServiceProcess, free_port
from tests.unit.enrichment.scenario import upserted

ATTRIBUTES = 5


async def run(records: int, per_entity: int) -> None:
    """Publish the records, wait until all are applied, then sample single-record latency."""
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    mongo = os.environ["MONGODB_URI"]
    tag = uuid.uuid4().hex[:8]
    work = Path(tempfile.mkdtemp(prefix=f"bench-{tag}-"))
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "MONGODB_URI": mongo,
        "ENGRAM_TOPIC_PREFIX": f"b{tag}.",
        "ENGRAM_DATABASE_PREFIX": f"b{tag}_",
        "ENGRAM_LOG_LEVEL": "WARNING",
        "ENGRAM_TRACING": "false",
        "ENGRAM_ENRICHMENT_EMBEDDER": "hashing",
        "ENGRAM_ENRICHMENT_VECTOR_PATH": str(work / "vectors"),
    }
    proc = ServiceProcess("enrichment", env, free_port(), work / "logs").start()
    db = MongoClient(mongo)[f"b{tag}_enrichment"]
    topic = f"b{tag}.engram.record-events.v1"
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    await producer.start()
    try:
        events = [
            upserted(
                f"rec_{i}",
                1,
                {
                    "name": f"n{i // per_entity}",
                    "fleet": 3,
                    "hq": "Berlin",
                    "country": "DE",
                    "ok": True,
                },
                entity_id=f"carrier:c{i // per_entity}",
            )
            for i in range(records)
        ]
        started = time.perf_counter()
        sent = [
            await producer.send(topic, encode(e), key=e.payload.record_id.encode()) for e in events
        ]
        await asyncio.gather(*sent)
        while db.applied_events.count_documents({}) < records:
            await asyncio.sleep(0.5)
        elapsed = time.perf_counter() - started
        facts = records * ATTRIBUTES // per_entity
        print(
            f"records={records} per_entity={per_entity} records/s={records / elapsed:.1f} "
            f"facts_created/s={facts / elapsed:.1f} elapsed_s={elapsed:.1f}"
        )
        latencies = []
        async with httpx.AsyncClient(base_url=proc.url) as client:
            for n in range(20):
                event = upserted(f"lat_{n}", 1, {"name": f"x{n}"}, entity_id=f"carrier:lat{n}")
                begun = time.perf_counter()
                await producer.send_and_wait(
                    topic, encode(event), key=event.payload.record_id.encode()
                )
                while True:
                    answer = await client.get(
                        f"/internal/v1/knowledge/entities/carrier:lat{n}",
                        headers={"x-engram-tenant": "tnt_a"},
                    )
                    if answer.status_code == 200 and f"x{n}" in answer.json()["article"]:
                        break
                    await asyncio.sleep(0.02)
                latencies.append(time.perf_counter() - begun)
        latencies.sort()
        print(f"upsert_to_article_ms p50={latencies[10] * 1000:.0f} p95={latencies[18] * 1000:.0f}")
    finally:
        await producer.stop()
        proc.stop()
        MongoClient(mongo).drop_database(f"b{tag}_enrichment")


if __name__ == "__main__":
    asyncio.run(run(int(sys.argv[1]), int(sys.argv[2])))
