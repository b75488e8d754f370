"""`python -m tests.soak`: sustained mixed load on the whole platform, with leak and lag figures.

Starts Kafka and FerretDB (or uses KAFKA_BOOTSTRAP_SERVERS / MONGODB_URI when both are set)
and every service, then for `--minutes` (10 by default) keeps up a steady mix through the
gateway and the file-drop folder: CSV uploads and dropped files, memory writes and recalls,
knowledge searches, record and status reads, and a document deletion (a prune followed to
`verified_empty`) every minute. Every few seconds it samples each process's RSS, each consumer
group's lag and the DLQ's size. Writes bench-results/soak.json and soak_rss.png,
soak_lag.png, soak_latency.png; exits 1 when a check fails (5xx, DLQ messages from valid
input, RSS still growing in the second half, lag not drained at the end, a prune not verified).

The default rates are what one 2-core machine running everything sustains with bounded lag;
at 1 upload/s with 10 memory writes and 10 recalls a second it saturates (p50 near 10 s,
lag growing without bound), which `--memories-per-s` and friends reproduce.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engram_devstack.processes import command_line
from tests.soak.load import Load, Rates
from tests.soak.report import plot, summarize
from tests.soak.sampler import Sampler

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench-results"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__)
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the load phase")
    parser.add_argument("--sample-seconds", type=float, default=5.0, help="RSS/lag sampling")
    parser.add_argument("--documents-per-s", type=float, default=0.2, help="CSV uploads")
    parser.add_argument("--memories-per-s", type=float, default=3.0, help="memory writes")
    parser.add_argument("--recalls-per-s", type=float, default=3.0, help="memory recalls")
    parser.add_argument("--searches-per-s", type=float, default=1.0, help="knowledge searches")
    parser.add_argument("--reads-per-s", type=float, default=2.0, help="record/status reads")
    parser.add_argument("--drop-every-s", type=float, default=30.0, help="one file-drop file")
    parser.add_argument("--prune-every-s", type=float, default=60.0, help="one document deleted")
    parser.add_argument("--drain-seconds", type=float, default=120.0, help="time to catch up")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Start everything, run the load and the sampler side by side, report, and judge."""
    from tests.conftest import Infra
    from tests.support.platform import start_platform, stop_platform
    from tests.support.tenants import create_tenant

    args = _parse(argv)
    rates = Rates(
        documents=args.documents_per_s,
        memories=args.memories_per_s,
        recalls=args.recalls_per_s,
        searches=args.searches_per_s,
        reads=args.reads_per_s,
        drop_every=args.drop_every_s,
        prune_every=args.prune_every_s,
    )
    RESULTS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="engram-soak-") as tmp:
        root = Path(tmp)
        with _servers(root) as (bootstrap, mongodb_uri, servers):
            print(f"[soak] servers ready: kafka {bootstrap}, mongodb {mongodb_uri}", flush=True)
            platform = start_platform(Infra(bootstrap, mongodb_uri), root / "platform")
            try:
                key = create_tenant(platform.env, "soak")
                print(f"[soak] platform up; {args.minutes:g} min of load at {rates}", flush=True)
                sampler = Sampler(platform, servers, every=args.sample_seconds)
                load = Load(platform, key, rates)
                started = time.monotonic()
                asyncio.run(_run(load, sampler, args.minutes * 60, args.drain_seconds))
                took = time.monotonic() - started
            finally:
                stop_platform(platform)
    summary = summarize(load, sampler, minutes=args.minutes, seconds=took, rates=rates)
    plots = plot(load, sampler, RESULTS)
    summary["plots"] = plots
    (RESULTS / "soak.json").write_text(json.dumps(summary, indent=2, default=str))
    _print(summary)
    return 0 if all(summary["checks"].values()) else 1


async def _run(load: Load, sampler: Sampler, seconds: float, drain: float) -> None:
    """Load for `seconds` with sampling throughout, then keep sampling until lag drains."""
    sampling = asyncio.create_task(sampler.run())
    try:
        await load.run(seconds)
        print("[soak] load finished; waiting for the pipeline to drain", flush=True)
        await sampler.drained(drain)
    finally:
        sampling.cancel()
        await asyncio.gather(sampling, return_exceptions=True)


@contextmanager
def _servers(root: Path) -> Iterator[tuple[str, str, dict[str, int | None]]]:
    """External servers when both addresses are set in the environment, else our own."""
    kafka, mongo = os.environ.get("KAFKA_BOOTSTRAP_SERVERS"), os.environ.get("MONGODB_URI")
    if kafka and mongo:
        yield kafka, mongo, _local_server_pids()
        return
    from tests.conftest import own_servers

    with own_servers(root / "servers") as (kafka_server, ferret):
        pids = {"kafka": kafka_server.running_pid(), "ferretdb": ferret.running_pid()}
        yield kafka_server.address, f"mongodb://{ferret.address}", pids


def _local_server_pids() -> dict[str, int | None]:
    """Kafka and FerretDB processes on this machine, when the given servers are local ones."""
    found: dict[str, int | None] = {}
    for proc in Path("/proc").glob("[0-9]*"):
        argv = command_line(int(proc.name))
        if argv and argv[0].endswith("engram-ferretdb"):
            found.setdefault("ferretdb", int(proc.name))
        elif argv and argv[0].endswith("java") and "kafka.Kafka" in argv:
            found.setdefault("kafka", int(proc.name))
    return found


def _print(summary: dict[str, object]) -> None:
    """The figures a person reads first; the JSON holds the rest."""
    print(json.dumps({k: v for k, v in summary.items() if k != "timeline"}, indent=2, default=str))


if __name__ == "__main__":
    sys.exit(main())
