"""Events per second per instance of each consuming service, draining a backlog with 1 and 2.

Run: python bench/scale_out.py [--documents 150] [--rows 10] [--memories 300]
Starts the whole platform (4 partitions per topic) on the broker and database named by
KAFKA_BOOTSTRAP_SERVERS / MONGODB_URI. For each service it stops every instance, runs a
workload (CSV uploads and memory writes through the gateway) until the service's backlog
stops growing, then starts N instances and times how many events its consumer group commits
until the backlog is gone: events/s for the group and per instance. Ingest, extraction and
embedding run with 1 and then 2 instances; memory and enrichment with 1 (their embedded
vector engine is one process per shard directory: to scale them out, point them at a Qdrant
server with QDRANT_URL). Writes bench-results/scale_out.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import Infra  # noqa: E402
from tests.support.chaos import add_instances  # noqa: E402
from tests.support.platform import Platform, start_platform, stop_platform  # noqa: E402
from tests.support.tenants import create_tenant  # noqa: E402

RESULTS = ROOT / "bench-results"
PLAN = {"ingest": 2, "extraction": 2, "embedding": 2, "enrichment": 1, "memory": 1}
WHAT = {
    "ingest": "document.submitted / document.extracted",
    "extraction": "document.ingested (one CSV of --rows rows each) and prune requests",
    "embedding": "embedding.requested (memories, facts, article sections)",
    "enrichment": "record.upserted and its embeddings",
    "memory": "memory writes and their embeddings",
}


async def committed_and_lag(bootstrap: str, group: str, prefix: str) -> tuple[int, int]:
    """Sum of the group's committed offsets and of its lag over the run's topics (every
    partition of a topic the group has committed on; one it never committed on counts from 0,
    as the run's topics are new)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await admin.start()
    await consumer.start()
    try:
        committed = await admin.list_consumer_group_offsets(group)
        topics = {tp.topic for tp in committed if tp.topic.startswith(prefix)}
        described = await admin.describe_topics(sorted(topics)) if topics else []
        wanted = [
            TopicPartition(d["topic"], p["partition"]) for d in described for p in d["partitions"]
        ]
        ends = await consumer.end_offsets(wanted) if wanted else {}
        done = {tp: max(0, committed[tp].offset) if tp in committed else 0 for tp in wanted}
        return sum(done.values()), sum(max(0, ends[tp] - done[tp]) for tp in wanted)
    finally:
        await consumer.stop()
        await admin.close()


def workload(platform: Platform, key: str, documents: int, rows: int, memories: int) -> None:
    """Uploads and memory writes through the gateway (accepted, not waited for)."""
    with httpx.Client(
        base_url=platform.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
    ) as client:
        agent = client.post("/v1/agents", json={"name": f"bench-{time.time_ns()}"}).json()
        stamp = time.time_ns()
        for i in range(documents):
            lines = [f"s{stamp}_{i}_{r},Carrier {r},City {r % 13},{r}" for r in range(rows)]
            text = "id,name,city,fleet_size\n" + "\n".join(lines) + "\n"
            response = client.post(
                "/v1/documents",
                json={"name": f"scale-{stamp}-{i}.csv", "mime": "text/csv", "text": text},
            )
            response.raise_for_status()
        for i in range(memories):
            response = client.post(
                f"/v1/agents/{agent['agent_id']}/memories",
                json={"content": f"Scale-out note {stamp} number {i} about carrier c{i % 97}"},
            )
            response.raise_for_status()


def warm_up(platform: Platform, key: str) -> None:
    """A small workload with everything running, so every group has committed on its topics."""
    workload(platform, key, 40, 2, 40)
    for service in PLAN:
        wait_backlog(platform, f"{platform.prefix}engram-{service}")
    print("[scale-out] warmed up: every group has committed on its topics", flush=True)


def wait_backlog(platform: Platform, group: str, settle: float = 4.0, limit: float = 300) -> int:
    """Wait until the stopped service's backlog has stopped growing; return it."""
    bootstrap = platform.env["KAFKA_BOOTSTRAP_SERVERS"]
    last, since = -1, time.monotonic()
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        _, lag = asyncio.run(committed_and_lag(bootstrap, group, platform.prefix))
        if lag != last:
            last, since = lag, time.monotonic()
        elif time.monotonic() - since >= settle:
            return lag
        time.sleep(0.5)
    return last


def drain(platform: Platform, group: str, limit: float = 600) -> dict[str, Any]:
    """Events committed from now until the lag first reaches zero (or `limit` seconds pass,
    then what was committed by then, marked not drained), and how long it took."""
    bootstrap = platform.env["KAFKA_BOOTSTRAP_SERVERS"]
    start_done, _ = asyncio.run(committed_and_lag(bootstrap, group, platform.prefix))
    began = time.monotonic()
    while True:
        done, lag = asyncio.run(committed_and_lag(bootstrap, group, platform.prefix))
        seconds = time.monotonic() - began
        if (lag == 0 and done > start_done) or seconds >= limit:
            return {
                "events": done - start_done,
                "seconds": round(seconds, 2),
                "drained": lag == 0,
            }
        time.sleep(0.25)


def measure(
    platform: Platform, key: str, service: str, instances: int, args: argparse.Namespace, root: Path
) -> dict[str, Any]:
    """Stop the service, build its backlog, start `instances` of it, time the drain."""
    group = f"{platform.prefix}engram-{service}"
    for name in [n for n in platform.services if n.split("#")[0] == service]:
        platform.services[name].stop()
    workload(platform, key, args.documents, args.rows, args.memories)
    backlog = wait_backlog(platform, group)
    started = time.monotonic()
    platform.services[service].start(wait=False)
    extra = add_instances(platform, [service], root) if instances == 2 else []
    platform.services[service].wait_ready(120)
    startup = time.monotonic() - started
    result = drain(platform, group)
    for proc in extra:
        proc.stop()
        platform.services.pop(f"{service}#2", None)
    rate = result["events"] / result["seconds"]
    figure = {
        "service": service,
        "instances": instances,
        "backlog": backlog,
        "events": result["events"],
        "seconds": result["seconds"],
        "startup_seconds": round(startup, 2),
        "events_per_s": round(rate, 1),
        "events_per_s_per_instance": round(rate / instances, 1),
        "drained": result["drained"],
        "events_are": WHAT[service],
    }
    print(json.dumps(figure), flush=True)
    return figure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=150, help="CSV uploads per backlog")
    parser.add_argument("--rows", type=int, default=10, help="rows per CSV")
    parser.add_argument("--memories", type=int, default=300, help="memory writes per backlog")
    parser.add_argument("--services", nargs="+", default=list(PLAN), choices=list(PLAN))
    args = parser.parse_args(argv)
    infra = Infra(
        os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
        os.environ.get("MONGODB_URI", "mongodb://127.0.0.1:27017"),
    )
    figures = []
    with tempfile.TemporaryDirectory(prefix="engram-bench-scale-") as tmp:
        root = Path(tmp)
        platform = start_platform(infra, root, ENGRAM_TOPIC_PARTITIONS="4")
        try:
            key = create_tenant(platform.env, "scale")
            warm_up(platform, key)
            for service in args.services:
                for instances in range(1, PLAN[service] + 1):
                    figures.append(measure(platform, key, service, instances, args, root))
        finally:
            stop_platform(platform)
    summary = {
        "bench": "scale_out",
        "partitions_per_topic": 4,
        "workload": {"documents": args.documents, "rows": args.rows, "memories": args.memories},
        "machine": f"{os.cpu_count()} cores, every service and both servers on it",
        "figures": figures,
    }
    print(json.dumps(summary, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scale_out.json").write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
