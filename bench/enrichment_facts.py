"""Facts per second from record.upserted events already on the topic, and upsert-to-article latency.

Run: python bench/enrichment_facts.py [--records 20000] [--per-entity 4 1] [--samples 20]
Starts enrichment as a process (as `make run` does) on the broker and database named by
KAFKA_BOOTSTRAP_SERVERS / MONGODB_URI, publishes the records (RECORDS / PER_ENTITY entities of
five attributes each), and times until every record is applied; then sends single records and
times each until its article shows the value. Embedding is excluded (no embedding service runs;
its requests are only staged). Writes bench-results/enrichment_facts.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from pymongo import MongoClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engram_devstack import free_port  # noqa: E402
from engram_events import encode  # noqa: E402
from tests.support.internal import internal_headers  # noqa: E402
from tests.support.services import ServiceProcess  # noqa: E402
from tests.unit.enrichment.scenario import upserted  # noqa: E402

RESULTS = ROOT / "bench-results"
ATTRIBUTES = 5
TENANT = "tnt_a"


def records(count: int, per_entity: int) -> list[Any]:
    """Record events; every record of one entity agrees, so each entity has five facts."""
    return [
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
        for i in range(count)
    ]


def stored_facts(db: Any) -> int:
    """Live facts over every entity collection (after the timing, so its scans cost nothing)."""
    names = [n for n in db.list_collection_names() if n.startswith("entities")]
    return sum(doc.get("fact_count", 0) for n in names for doc in db[n].find({}, {"fact_count": 1}))


async def latency(producer: AIOKafkaProducer, topic: str, url: str, samples: int) -> list[float]:
    """Seconds from sending one record until the entity's article shows its value."""
    seconds = []
    async with httpx.AsyncClient(base_url=url) as client:
        for n in range(samples):
            event = upserted(f"lat_{n}", 1, {"name": f"x{n}"}, entity_id=f"carrier:lat{n}")
            begun = time.perf_counter()
            await producer.send_and_wait(topic, encode(event), key=event.payload.record_id.encode())
            while True:
                answer = await client.get(
                    f"/internal/v1/knowledge/entities/carrier:lat{n}",
                    headers=internal_headers(TENANT),
                )
                if answer.status_code == 200 and f"x{n}" in answer.json()["article"]:
                    break
                await asyncio.sleep(0.01)
            seconds.append(time.perf_counter() - begun)
    return sorted(seconds)


def percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


async def committed(admin: AIOKafkaAdminClient, group: str, topic: str) -> int:
    """Records the group has committed on `topic`: applied and durable (the consumer commits a
    batch only after its writes). Asking the database instead (a count over the applied-events
    table every poll) cost the local server a scan per poll and slowed the figure it measured."""
    offsets = await admin.list_consumer_group_offsets(group)
    return sum(max(0, meta.offset) for tp, meta in offsets.items() if tp.topic == topic)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process so far (Linux `/proc`; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run(count: int, per_entity: int, samples: int, within: float) -> dict[str, Any]:
    """One enrichment process and database: the bulk figure, then the latency samples."""
    bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092")
    mongo = os.environ.get("MONGODB_URI", "mongodb://127.0.0.1:27017")
    tag = uuid.uuid4().hex[:8]
    work = Path(tempfile.mkdtemp(prefix=f"engram-bench-{tag}-"))
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "MONGODB_URI": mongo,
        "ENGRAM_TOPIC_PREFIX": f"bench{tag}.",
        "ENGRAM_DATABASE_PREFIX": f"bench{tag}_",
        "ENGRAM_LOG_LEVEL": "WARNING",
        "ENGRAM_TRACING": "false",
        "ENGRAM_ENRICHMENT_EMBEDDER": "hashing",
        "ENGRAM_ENRICHMENT_VECTOR_PATH": str(work / "vectors"),
    }
    database = f"bench{tag}_enrichment"
    db: Any = MongoClient(mongo)[database]
    topic = f"bench{tag}.engram.record-events.v1"
    proc = ServiceProcess("enrichment", env, free_port(), work / "logs").start()
    assert proc.proc is not None
    pid = proc.proc.pid
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    await producer.start()
    result: dict[str, Any] = {"records": count, "per_entity": per_entity}
    try:
        events = records(count, per_entity)
        cpu_before = cpu_seconds(pid)
        started = time.perf_counter()
        sent = [
            await producer.send(topic, encode(e), key=e.payload.record_id.encode()) for e in events
        ]
        await asyncio.gather(*sent)
        result["published_s"] = round(time.perf_counter() - started, 2)
        applied = 0
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            while applied < count and time.perf_counter() - started < within:
                await asyncio.sleep(0.25)
                applied = await committed(admin, f"bench{tag}.engram-enrichment", topic)
        finally:
            await admin.close()
        elapsed = time.perf_counter() - started
        cpu_after = cpu_seconds(pid)
        if cpu_before is not None and cpu_after is not None and applied:
            result["enrichment_cpu_ms_per_record"] = round(
                (cpu_after - cpu_before) * 1000 / applied, 2
            )
        facts = count * ATTRIBUTES // per_entity
        result |= {
            "applied": applied,
            "elapsed_s": round(elapsed, 2),
            "records_per_s": round(applied / elapsed, 1),
            "facts_per_s": round(facts * applied / count / elapsed, 1),
            "facts_expected": facts,
            "facts_stored": stored_facts(db),
            "dead_letters": proc.logs().count("dead-lettered"),
        }
        if applied == count and samples:
            seconds = await latency(producer, topic, proc.url, samples)
            result["upsert_to_article_ms"] = {
                "p50": round(percentile(seconds, 0.5) * 1000, 1),
                "p95": round(percentile(seconds, 0.95) * 1000, 1),
                "max": round(seconds[-1] * 1000, 1),
            }
    finally:
        await producer.stop()
        proc.stop()
        MongoClient(mongo).drop_database(database)
    return result


def ok(result: dict[str, Any]) -> bool:
    """Every record applied, every fact stored, nothing dead-lettered."""
    return bool(
        result["applied"] == result["records"]
        and result["facts_stored"] == result["facts_expected"]
        and result["dead_letters"] == 0
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--per-entity", type=int, nargs="+", default=[4, 1])
    parser.add_argument("--samples", type=int, default=20, help="single-record latency samples")
    parser.add_argument("--within", type=float, default=1800.0, help="seconds before giving up")
    args = parser.parse_args()
    runs = []
    for per_entity in args.per_entity:
        result = asyncio.run(run(args.records, per_entity, args.samples, args.within))
        print(json.dumps(result), flush=True)
        runs.append(result)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "enrichment_facts.json").write_text(json.dumps({"runs": runs}, indent=2))
    return 0 if all(ok(r) for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
