"""Time from `POST /v1/prune` to `verified_empty` for N records with derived facts and memories.

Starts the whole platform (every service a process) against the broker and database in
KAFKA_BOOTSTRAP_SERVERS / MONGODB_URI, imports N records through the gateway, waits until
enrichment has derived their facts, stores a memory derived from every tenth record, then
prunes all N records by id and waits for the job to report `verified_empty`. The hashing
embedder is used so the figure measures the cascade, not MiniLM.
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
from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import Infra  # noqa: E402
from tests.support.platform import start_platform, stop_platform  # noqa: E402
from tests.support.polling import until  # noqa: E402

HASHING = {
    "ENGRAM_EMBEDDING_EMBEDDER": "hashing",
    "ENGRAM_MEMORY_EMBEDDER": "hashing",
    "ENGRAM_ENRICHMENT_EMBEDDER": "hashing",
}


def record_ids(client: httpx.Client) -> list[str]:
    """Every record id (the run's records are all shipments), following the cursor; the
    unfiltered listing walks an index, a `type` filter scans and timed out at 10k mid-import."""
    ids: list[str] = []
    cursor = None
    while True:
        params = {"limit": "500", **({"cursor": cursor} if cursor else {})}
        response = client.get("/v1/records", params=params)
        if response.status_code != 200:
            return []
        page = response.json()
        ids += [r["record_id"] for r in page["records"]]
        cursor = page["next_cursor"]
        if not cursor:
            return ids


def run(
    client: httpx.Client, size: int, timeout: float, bootstrap: str, prefix: str
) -> dict[str, Any]:
    """One measured prune of `size` records; returns the figures.

    A service's acknowledgement time is the last time its pending count reached zero: memory's
    grows again when enrichment's withdrawn facts reach it, so the first zero understated it.
    """
    started = time.monotonic()
    rows = [{"id": f"s{i}", "lane": f"lane-{i % 17}", "weight": i % 1000} for i in range(size)]
    for first in range(0, size, 5000):
        response = client.post(
            "/v1/records:import",
            json={
                "source": f"bench-{size}",
                "record_type": "shipment",
                "rows": rows[first : first + 5000],
            },
        )
        response.raise_for_status()
    ids: list[str] = until(
        lambda: found if len(found := record_ids(client)) >= size else None,
        "all records",
        timeout,
    )
    last = f"shipment:s{size - 1}"
    until(lambda: client.get(f"/v1/knowledge/entities/{last}").status_code == 200, "facts", timeout)
    derived_at = time.monotonic()
    agent = client.post("/v1/agents", json={"name": "bench"}).json()["agent_id"]
    derived_memories = ids[::10]
    for record_id in derived_memories:
        client.post(
            f"/v1/agents/{agent}/memories",
            json={"content": f"note about {record_id}", "derived_from": [record_id]},
        ).raise_for_status()
    until(lambda: len(active_memories(client, agent)) >= len(derived_memories), "memories", timeout)
    asyncio.run(quiet(bootstrap, prefix, timeout))
    quiet_at = time.monotonic()
    prune_start = time.monotonic()
    job_id = client.post("/v1/prune", json={"record_ids": ids}).json()["prune_job_id"]
    acknowledged: dict[str, float] = {}
    job: dict[str, Any] = {}
    deadline = prune_start + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/v1/prune-jobs/{job_id}").json()
        for service, ack in job["acknowledgements"].items():
            if ack["pending"] or not ack["expected"]:
                acknowledged.pop(service, None)
            elif service not in acknowledged:
                acknowledged[service] = round(time.monotonic() - prune_start, 2)
        if job["status"] == "completed":
            break
        time.sleep(0.2)
    else:
        raise SystemExit(f"verified_empty never happened within {timeout:.0f}s")
    prune_seconds = time.monotonic() - prune_start
    return {
        "records": size,
        "setup_seconds": round(derived_at - started, 1),
        "settle_seconds": round(quiet_at - derived_at, 1),
        "prune_to_verified_seconds": round(prune_seconds, 2),
        "acknowledged_after_seconds": acknowledged,
        "verified_empty": job["verified_empty"],
        "counts": job["counts"],
    }


def active_memories(client: httpx.Client, agent: str) -> list[Any]:
    """The agent's memories stored so far (written ones are `pending` until embedded)."""
    response = client.get(
        f"/v1/agents/{agent}/memories", params={"status": "active", "limit": 1000}
    )
    response.raise_for_status()
    return list(response.json()["memories"])


async def backlog(admin: AIOKafkaAdminClient, consumer: AIOKafkaConsumer, prefix: str) -> int:
    """Messages on this platform's topics that a consumer group has not committed yet."""
    total = 0
    for group, _ in await admin.list_consumer_groups():
        committed = await admin.list_consumer_group_offsets(group)
        mine = {tp: meta.offset for tp, meta in committed.items() if tp.topic.startswith(prefix)}
        if mine:
            ends = await consumer.end_offsets(list(mine))
            total += sum(max(0, ends[tp] - offset) for tp, offset in mine.items())
    return total


async def quiet(bootstrap: str, prefix: str, within: float) -> None:
    """Until setup's own work (facts, articles, their embeddings) has drained, twice in a row,
    so the prune is timed alone rather than behind the backlog it was started on."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await admin.start()
    await consumer.start()
    try:
        deadline = time.monotonic() + within
        calm = 0
        while calm < 2:
            if time.monotonic() > deadline:
                raise SystemExit("the platform never drained its setup backlog")
            calm = calm + 1 if await backlog(admin, consumer, prefix) == 0 else 0
            await asyncio.sleep(1.0)
    finally:
        await consumer.stop()
        await admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000", help="comma-separated record counts")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    infra = Infra(os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["MONGODB_URI"])
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="engram-prune-bench-") as root:
            platform = start_platform(infra, Path(root), **HASHING)
            try:
                with platform.client(timeout=120) as client:
                    result = run(client, size, args.timeout, infra.bootstrap, platform.prefix)
            finally:
                stop_platform(platform)
        print(json.dumps(result), flush=True)
        results.append(result)
    target = ROOT / "bench-results" / "prune_cascade.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps({"runs": results, "target_10k_seconds": 15}, indent=2))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
