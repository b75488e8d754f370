"""Events per second per instance of each consuming service, draining a backlog with 1, 2, 3.

Run: python bench/scale_out.py [--documents 150] [--rows 10] [--memories 300]
Starts the whole platform (4 partitions per topic) on the broker and database named by
KAFKA_BOOTSTRAP_SERVERS / MONGODB_URI. For each service it stops every instance, runs a
workload (CSV uploads and memory writes through the gateway, for a tenant of its own) until
the service's backlog stops growing, then starts N instances at once and times how many
events its consumer group commits from its first commit (members started and joined) until
the backlog is gone: events/s for the group and per instance.
Ingest, extraction and embedding run with 1, 2 and then 3 instances; memory and enrichment
with 1 (their embedded vector engine is one process per shard directory: to scale them out,
point them at a Qdrant server with QDRANT_URL).

Each run's workload is the same for a service at every instance count, so once the platform
is quiet the tenant's end state (the chaos test's snapshot: documents, records, facts,
contradictions, memories and their vectors, keyed by content, not ids) must be identical to
the one-instance run's, with nothing duplicated; the figures say whether it was.
Writes bench-results/scale_out.json.
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
from pymongo import MongoClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import Infra  # noqa: E402
from tests.support.chaos import (  # noqa: E402
    CONSUMING,
    add_instances,
    difference,
    duplicates,
    patient_client,
    snapshot,
    summary,
)
from tests.support.platform import Platform, start_platform, stop_platform  # noqa: E402
from tests.support.tenants import create_tenant  # noqa: E402

RESULTS = ROOT / "bench-results"
PLAN = {"ingest": 3, "extraction": 3, "embedding": 3, "enrichment": 1, "memory": 1}
ONE_ONLY = (
    "one instance only: its embedded vector engine is one process per shard directory "
    "(QDRANT_URL, a Qdrant server, lets it scale out)"
)
AGENT = "scale-agent"
TOO_SMALL = (
    "not timed: the whole backlog was committed at the group's first commit (one consumer "
    "batch, ENGRAM_CONSUMER_BATCH_SIZE); a larger backlog is needed for a rate"
)
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


def workload(
    platform: Platform, key: str, documents: int, rows: int, memories: int, stamp: str
) -> None:
    """Uploads and memory writes through the gateway (accepted, not waited for); the same
    `stamp` gives the same names and contents."""
    with httpx.Client(
        base_url=platform.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
    ) as client:
        agent = client.post("/v1/agents", json={"name": AGENT}).json()
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
    workload(platform, key, 40, 2, 40, "warm")
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


def drain(platform: Platform, group: str, start_done: int, limit: float = 300) -> dict[str, Any]:
    """From the group's first commit past `start_done` (its members consuming) until its lag
    first reaches zero: events committed and seconds taken, and how long that first commit
    took (start-up and joining the group). After `limit` seconds, what was committed by then,
    marked not drained."""
    bootstrap = platform.env["KAFKA_BOOTSTRAP_SERVERS"]
    launched = time.monotonic()
    began: float | None = None
    first_done = start_done
    while True:
        done, lag = asyncio.run(committed_and_lag(bootstrap, group, platform.prefix))
        now = time.monotonic()
        if began is None and done > start_done:
            began, first_done = now, done
        if (began is not None and lag == 0) or now - launched >= limit:
            seconds = now - (began if began is not None else launched)
            return {
                "events": done - start_done,
                "timed_events": done - first_done,
                "seconds": round(seconds, 2),
                "to_first_commit_seconds": round((began or now) - launched, 2),
                "drained": lag == 0,
            }
        time.sleep(0.25)


def caught_up(platform: Platform) -> bool:
    """Every consuming group at zero lag on what it has committed, every outbox empty. Unlike
    the chaos test's check, a group that never committed (the gateway's, with no prune in
    this workload) counts as caught up."""
    bootstrap = platform.env["KAFKA_BOOTSTRAP_SERVERS"]
    for service in CONSUMING:
        group = f"{platform.prefix}engram-{service}"
        if asyncio.run(committed_and_lag(bootstrap, group, platform.prefix))[1]:
            return False
    with MongoClient[dict[str, Any]](platform.env["MONGODB_URI"]) as mongo:
        prefix = platform.env["ENGRAM_DATABASE_PREFIX"]
        return not any(mongo[f"{prefix}{s}"]["outbox"].count_documents({}) for s in CONSUMING)


def end_state(platform: Platform, key: str, limit: float = 300) -> dict[str, Any]:
    """The tenant's snapshot once the platform has caught up (twice in a row, 2 s apart), or
    after `limit` seconds."""
    deadline = time.monotonic() + limit
    calm = 0
    while calm < 2 and time.monotonic() < deadline:
        calm = calm + 1 if caught_up(platform) else 0
        time.sleep(2.0)
    with patient_client(platform, key) as client:
        return snapshot(client, [AGENT])


def compare(
    service: str, instances: int, state: dict[str, Any], first: dict[str, Any] | None
) -> dict[str, Any]:
    """Whether the end state matches the one-instance run's, with what differs (capped)."""
    doubled = duplicates(state)
    diff = {} if first is None else difference(first, state)
    verdict: dict[str, Any] = {
        "end_state": summary(state),
        "end_state_duplicates": {kind: len(keys) for kind, keys in doubled.items()},
        "end_state_matches_1_instance": None if first is None else not diff and not doubled,
    }
    if diff:
        verdict["end_state_differences"] = {
            kind: {side: [str(k) for k in keys[:5]] for side, keys in sides.items()}
            for kind, sides in diff.items()
        }
    if first is None:
        said = "the baseline" + (" (duplicates!)" if doubled else ", no duplicates")
    else:
        said = "identical to 1 instance" if verdict["end_state_matches_1_instance"] else "DIFFERS"
    print(f"[scale-out] {service} x{instances}: end state {said}: {summary(state)}", flush=True)
    return verdict


def measure(
    platform: Platform,
    service: str,
    instances: int,
    args: argparse.Namespace,
    root: Path,
    first: dict[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Stop the service, build its backlog for a new tenant, start `instances` of it, time the
    drain; then the tenant's end state once the platform is quiet."""
    group = f"{platform.prefix}engram-{service}"
    key = create_tenant(platform.env, f"scale-{service}-{instances}")
    for name in [n for n in platform.services if n.split("#")[0] == service]:
        platform.services[name].stop()
    workload(platform, key, args.documents, args.rows, args.memories, service)
    backlog = wait_backlog(platform, group)
    start_done, _ = asyncio.run(
        committed_and_lag(platform.env["KAFKA_BOOTSTRAP_SERVERS"], group, platform.prefix)
    )
    platform.services[service].start(wait=False)
    extra = add_instances(platform, [service], root, instances - 1, wait=False)
    result = drain(platform, group, start_done)
    for proc in [platform.services[service], *extra]:
        proc.wait_ready(120)
    state = end_state(platform, key)
    for number, proc in enumerate(extra, start=2):
        proc.stop()
        platform.services.pop(f"{service}#{number}", None)
    timed = result["timed_events"] > 0 and result["seconds"] > 0
    rate = result["timed_events"] / result["seconds"] if timed else None
    figure = {
        "service": service,
        "instances": instances,
        "backlog": backlog,
        "events": result["events"],
        "timed_events": result["timed_events"],
        "seconds": result["seconds"],
        "to_first_commit_seconds": result["to_first_commit_seconds"],
        "events_per_s": None if rate is None else round(rate, 1),
        "events_per_s_per_instance": None if rate is None else round(rate / instances, 1),
        "timed": timed or TOO_SMALL,
        "drained": result["drained"],
        "events_are": WHAT[service],
        **compare(service, instances, state, first),
    }
    print(json.dumps({k: v for k, v in figure.items() if not k.startswith("end_")}), flush=True)
    return figure, state


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
            warm_up(platform, create_tenant(platform.env, "scale"))
            for service in args.services:
                if PLAN[service] == 1:
                    print(f"[scale-out] {service}: {ONE_ONLY}", flush=True)
                first: dict[str, Any] | None = None
                for instances in range(1, PLAN[service] + 1):
                    figure, state = measure(platform, service, instances, args, root, first)
                    figures.append(figure)
                    first = state if first is None else first
        finally:
            stop_platform(platform)
    summary = {
        "bench": "scale_out",
        "partitions_per_topic": 4,
        "workload": {"documents": args.documents, "rows": args.rows, "memories": args.memories},
        "machine": f"{os.cpu_count()} cores, every service and both servers on it",
        "one_instance_only": {s: ONE_ONLY for s, n in PLAN.items() if n == 1},
        "end_states_identical": all(
            not f["end_state_duplicates"] and f["end_state_matches_1_instance"] is not False
            for f in figures
        ),
        "figures": figures,
    }
    print(json.dumps(summary, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scale_out.json").write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
