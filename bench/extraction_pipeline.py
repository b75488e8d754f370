"""Records per second from a CSV submitted through the gateway until its last event is out.

Run: python bench/extraction_pipeline.py [--rows 20000]
Starts ingest, extraction and the gateway as processes (as `make run` does) on the broker and
database named by KAFKA_BOOTSTRAP_SERVERS / MONGODB_URI, submits one CSV, and times: the
202, the extract log's `extracted` (records durable), and the last `record.upserted` read
back from Kafka. Writes bench-results/extraction_pipeline.json.
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
from aiokafka import AIOKafkaConsumer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engram_devstack import free_port  # noqa: E402
from tests.support.services import ServiceProcess  # noqa: E402
from tests.support.tenants import create_tenant  # noqa: E402

RESULTS = ROOT / "bench-results"


def csv_rows(rows: int) -> str:
    """A carriers-like CSV with an id column and a few attributes."""
    lines = ["id,name,city,fleet_size,rating"]
    lines += [f"c{i},Carrier {i},City {i % 311},{i % 1000},{i % 5}" for i in range(rows)]
    return "\n".join(lines) + "\n"


async def count_upserts(bootstrap: str, topic: str, want: int, within: float) -> float | None:
    """Read the record-events topic until `want` distinct records were announced; when."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    seen: set[str] = set()
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=500, max_records=5000)
            for records in batch.values():
                for record in records:
                    event = json.loads(record.value)
                    if event.get("event_type") == "record.upserted":
                        seen.add(event["payload"]["record_id"])
            if len(seen) >= want:
                return time.monotonic()
    finally:
        await consumer.stop()
    return None


async def run(rows: int) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
        "MONGODB_URI": os.environ.get("MONGODB_URI", "mongodb://127.0.0.1:27017"),
        "ENGRAM_TOPIC_PREFIX": f"bench{tag}.",
        "ENGRAM_DATABASE_PREFIX": f"bench{tag}_",
        "ENGRAM_TRACING": "false",
        "ENGRAM_LOG_LEVEL": "WARNING",
        "ENGRAM_GATEWAY_MAX_DOCUMENT_BYTES": str(64 * 1024 * 1024),
    }
    logs = Path(tempfile.mkdtemp(prefix="engram-bench-logs-"))
    procs: list[ServiceProcess] = []
    try:
        ingest = ServiceProcess("ingest", env, free_port(), logs).start()
        procs.append(ingest)
        extraction = ServiceProcess("extraction", env, free_port(), logs).start()
        procs.append(extraction)
        gateway = ServiceProcess(
            "gateway",
            {
                **env,
                "ENGRAM_GATEWAY_INGEST_URL": ingest.url,
                "ENGRAM_GATEWAY_EXTRACTION_URL": extraction.url,
            },
            free_port(),
            logs,
        ).start()
        procs.append(gateway)
        key = create_tenant(gateway.env, "bench")
        body = csv_rows(rows)
        topic = f"{env['ENGRAM_TOPIC_PREFIX']}engram.record-events.v1"
        async with httpx.AsyncClient(
            base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=120
        ) as client:
            started = time.monotonic()
            watcher = asyncio.create_task(
                count_upserts(env["KAFKA_BOOTSTRAP_SERVERS"], topic, rows, within=900)
            )
            accepted = await client.post(
                "/v1/documents", json={"name": "carriers.csv", "mime": "text/csv", "text": body}
            )
            accepted.raise_for_status()
            t_accepted = time.monotonic()
            doc_id = accepted.json()["document_id"]
            t_extracted = None
            status: dict[str, Any] = {}
            while time.monotonic() - started < 900:
                status = (await client.get(f"/v1/documents/{doc_id}")).json()
                if status.get("status") in {"extracted", "failed"}:
                    t_extracted = time.monotonic()
                    break
                await asyncio.sleep(0.2)
            t_last = await watcher
        return {
            "rows": rows,
            "csv_bytes": len(body.encode()),
            "status": status.get("status"),
            "record_count": status.get("record_count"),
            "accepted_s": round(t_accepted - started, 3),
            "records_durable_s": round(t_extracted - started, 3) if t_extracted else None,
            "last_upserted_s": round(t_last - started, 3) if t_last else None,
            "records_per_s_durable": round(rows / (t_extracted - started), 1)
            if t_extracted
            else None,
            "records_per_s_end_to_end": round(rows / (t_last - started), 1) if t_last else None,
        }
    finally:
        for proc in reversed(procs):
            proc.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    result = asyncio.run(run(args.rows))
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "extraction_pipeline.json").write_text(json.dumps(result, indent=2))
    return 0 if result["status"] == "extracted" and result["last_upserted_s"] else 1


if __name__ == "__main__":
    sys.exit(main())
