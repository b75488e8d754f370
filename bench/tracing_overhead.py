"""Document pipeline throughput with tracing on versus off (ENGRAM_TRACING=false), as a ratio.

Run: python bench/tracing_overhead.py [--documents 400] [--rounds 2] [--rows 2 25]
Starts gateway, ingest and extraction as real processes (unique topic/database prefixes per
run), posts CSV documents through the gateway with a few concurrent clients, and times until
every one is announced `document.extracted`. Each `--rows` value is a workload: documents of
that many rows (2 is the worst case for tracing: ~26 spans of bookkeeping per document and
almost no work; 25 is a small real spreadsheet). Rounds alternate off/on then on/off (a
warm-up bias falls on both); the best round of each counts. CPU milliseconds per document of
each process (and of the MongoDB-protocol server when its pid is found) say where the time
goes. Prints and writes bench-results/tracing_overhead.json; the target is ≥ 0.9.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
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

RESULTS = ROOT / "bench-results"
CONCURRENCY = 8


def _env(tracing: bool) -> dict[str, str]:
    tag = uuid.uuid4().hex[:8]
    return {
        "KAFKA_BOOTSTRAP_SERVERS": os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
        "MONGODB_URI": os.environ.get("MONGODB_URI", "mongodb://127.0.0.1:27017"),
        "ENGRAM_TOPIC_PREFIX": f"b{tag}.",
        "ENGRAM_DATABASE_PREFIX": f"b{tag}_",
        "ENGRAM_TRACING": "true" if tracing else "false",
        "ENGRAM_LOG_LEVEL": "WARNING",
    }


def _create_tenant(env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "engram_gateway", "create-tenant", "bench"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return out.stdout.strip()


async def _count_extracted(bootstrap: str, topic: str, want: int, limit_seconds: float) -> float:
    """Wait until `want` document.extracted events are on the topic; returns when it happened."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    seen = 0
    deadline = time.perf_counter() + limit_seconds
    try:
        while seen < want:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"only {seen} of {want} documents extracted")
            batch = await consumer.getmany(timeout_ms=200)
            for records in batch.values():
                seen += sum(1 for r in records if r.value and b'"document.extracted"' in r.value)
    finally:
        await consumer.stop()
    return time.perf_counter()


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _database_server_pid() -> int | None:
    """The local MongoDB-protocol server's pid, when it runs on this machine."""
    for stat in Path("/proc").glob("[0-9]*/comm"):
        try:
            if stat.read_text().strip() == "engram-ferretdb":
                return int(stat.parent.name)
        except OSError:
            continue
    return None


def _csv(i: int, rows: int) -> str:
    """A distinct document of `rows` carrier rows."""
    lines = [f"c{i}_{r},Carrier {i} {r},Town {r % 7}" for r in range(rows)]
    return "id,name,city\n" + "\n".join(lines) + "\n"


async def _post_all(url: str, key: str, count: int, rows: int) -> None:
    """Submit `count` distinct CSVs with a few concurrent clients."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(count):
        queue.put_nowait(i)

    async def worker() -> None:
        async with httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as client:
            while not queue.empty():
                i = queue.get_nowait()
                text = _csv(i, rows)
                response = await client.post(
                    "/v1/documents",
                    json={"name": f"carriers_{i}.csv", "mime": "text/csv", "text": text},
                )
                response.raise_for_status()

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


def one_round(tracing: bool, documents: int, rows: int, logs: Path) -> dict[str, Any]:
    """Start the three services, push the documents, and time the pipeline end to end."""
    env = _env(tracing)
    ingest = ServiceProcess("ingest", env, free_port(), logs)
    extraction = ServiceProcess("extraction", env, free_port(), logs)
    gateway = ServiceProcess("gateway", env, free_port(), logs)
    try:
        ingest.start()
        extraction.start()
        gateway.env["ENGRAM_GATEWAY_INGEST_URL"] = ingest.url
        gateway.start()
        key = _create_tenant(env)
        topic = f"{env['ENGRAM_TOPIC_PREFIX']}engram.documents.v1"
        pids = {p.name: p.proc.pid for p in (gateway, ingest, extraction) if p.proc}
        server = _database_server_pid()
        if server:
            pids["database"] = server
        cpu_before = {name: _cpu_seconds(pid) for name, pid in pids.items()}

        async def run() -> float:
            started = time.perf_counter()
            waiter = asyncio.create_task(
                _count_extracted(env["KAFKA_BOOTSTRAP_SERVERS"], topic, documents, 600)
            )
            await _post_all(gateway.url, key, documents, rows)
            finished = await waiter
            return finished - started

        seconds = asyncio.run(run())
        cpu_ms = {
            name: round((_cpu_seconds(pid) - cpu_before[name]) * 1000 / documents, 2)
            for name, pid in pids.items()
        }
    finally:
        for proc in (gateway, extraction, ingest):
            proc.stop()
    return {
        "tracing": tracing,
        "rows_per_document": rows,
        "documents": documents,
        "seconds": round(seconds, 3),
        "documents_per_second": round(documents / seconds, 2),
        "cpu_ms_per_document": cpu_ms,
    }


def _compare(rows: int, rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The best round with tracing off against the best with it on, and their CPU per document."""
    best_off = max((r for r in rounds if not r["tracing"]), key=lambda r: r["documents_per_second"])
    best_on = max((r for r in rounds if r["tracing"]), key=lambda r: r["documents_per_second"])
    return {
        "rows_per_document": rows,
        "tracing_off_docs_per_second": best_off["documents_per_second"],
        "tracing_on_docs_per_second": best_on["documents_per_second"],
        "ratio_on_over_off": round(
            best_on["documents_per_second"] / best_off["documents_per_second"], 3
        ),
        "cpu_ms_per_document_off": best_off["cpu_ms_per_document"],
        "cpu_ms_per_document_on": best_on["cpu_ms_per_document"],
        "rounds": rounds,
    }


def main(argv: list[str] | None = None) -> int:
    """Alternate off/on rounds, compare the best of each, print and save the ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=400, help="documents per round")
    parser.add_argument("--rounds", type=int, default=2, help="off/on pairs per workload")
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[2, 25], help="rows per document, one workload each"
    )
    args = parser.parse_args(argv)
    workloads = []
    with tempfile.TemporaryDirectory(prefix="engram-bench-tracing-") as tmp:
        for rows in args.rows:
            rounds: list[dict[str, Any]] = []
            for round_index in range(args.rounds):
                for tracing in (False, True) if round_index % 2 == 0 else (True, False):
                    result = one_round(tracing, args.documents, rows, Path(tmp))
                    print(json.dumps({"bench": "tracing_overhead_round", **result}), flush=True)
                    rounds.append(result)
            workloads.append(_compare(rows, rounds))
    summary = {
        "bench": "tracing_overhead",
        "pipeline": "gateway POST /v1/documents -> ingest -> extraction (document.extracted)",
        "documents_per_round": args.documents,
        "concurrency": CONCURRENCY,
        "target": 0.9,
        "workloads": workloads,
    }
    print(json.dumps(summary, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "tracing_overhead.json").write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
