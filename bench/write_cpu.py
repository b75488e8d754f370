"""Write CPU: milliseconds of CPU each service process spends per memory written.

Run: python bench/write_cpu.py [--memories 3000] [--rounds 3] [--per-request 1]
Needs KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI (`python -m bench` provides them).

Embedding, memory and a gateway on fresh topics and databases take the memories through the
gateway in a closed loop (at most 1,000 posted and not yet stored). Each process's user and
system CPU is read from /proc before and after, so the cost lands on the service that pays it;
the hashing embedder keeps the model's cost from hiding the rest. The broker's and the
database's CPU over the same span is reported too, less what they spend idle (measured for a few
seconds before the writes), since a change in how services fetch or write moves cost there. Run
it on two commits back to back to find which service a write-path change made dearer (CPU time barely moves with other
load on the machine, unlike throughput). Writes bench-results/write_cpu.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._cpus import infra_ports, listening_pids  # noqa: E402
from bench.memory_recall import sentences, sustained_writes, write_platform  # noqa: E402
from tests.support.services import ServiceProcess  # noqa: E402

RESULTS = ROOT / "bench-results"
WINDOW = 1000
HASHING = {"ENGRAM_EMBEDDING_EMBEDDER": "hashing", "ENGRAM_MEMORY_EMBEDDER": "hashing"}
TICKS = os.sysconf("SC_CLK_TCK")
IDLE_SECONDS = 5.0


def pid_cpu_seconds(pid: int) -> float:
    """User plus system CPU a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def cpu_seconds(process: ServiceProcess) -> float:
    """User plus system CPU the service process has used so far."""
    assert process.proc is not None
    return pid_cpu_seconds(process.proc.pid)


def infra_cpu_seconds(pids: list[int]) -> float:
    """The broker's and the database's CPU so far, together."""
    return sum(pid_cpu_seconds(pid) for pid in pids)


async def one_round(memories: int, per_request: int, seed: int) -> dict[str, Any]:
    """CPU milliseconds per memory in each service, and the rate, for one fresh platform."""
    seen: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="engram-bench-cpu-") as tmp:
        services: list[ServiceProcess] = []
        platform = write_platform(Path(tmp), "cpu", seen, HASHING, started=services)
        async with platform as (gateway, key, agent_id):
            infra = listening_pids(infra_ports(os.environ))
            idle_from = infra_cpu_seconds(infra)
            await asyncio.sleep(IDLE_SECONDS)
            idle_per_s = (infra_cpu_seconds(infra) - idle_from) / IDLE_SECONDS
            before = {p.name: cpu_seconds(p) for p in services}
            before["broker+database"] = infra_cpu_seconds(infra)
            started = time.perf_counter()
            texts = sentences(memories, seed=seed)
            written = await sustained_writes(
                gateway, key, agent_id, texts, seen, per_request, WINDOW, []
            )
            after = {p.name: cpu_seconds(p) for p in services}
            after["broker+database"] = infra_cpu_seconds(infra) - idle_per_s * (
                time.perf_counter() - started
            )
    per_memory = {name: round(1000 * (after[name] - before[name]) / memories, 3) for name in after}
    return {
        "cpu_ms_per_memory": per_memory,
        "total_ms": round(sum(per_memory.values()), 3),
        "infra_idle_cpu_ms_per_s": round(1000 * idle_per_s, 1),
        "write_throughput_per_s": written["write_throughput_per_s"],
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=3000, help="memories per round")
    parser.add_argument("--rounds", type=int, default=3, help="fresh platforms, one after another")
    parser.add_argument(
        "--per-request", type=int, default=1, help="memories per POST (1, or up to 100 :batch)"
    )
    args = parser.parse_args()
    if args.memories < 2 * (WINDOW + args.per_request):
        parser.error(f"--memories must exceed twice {WINDOW} (the window) plus a request")
    RESULTS.mkdir(exist_ok=True)
    rounds = []
    for number in range(1, args.rounds + 1):
        result = await one_round(args.memories, args.per_request, seed=10 + number)
        print(f"[bench] round {number}/{args.rounds}: {json.dumps(result)}", flush=True)
        rounds.append(result)
    report = {
        "day": datetime.now(UTC).date().isoformat(),
        "memories": args.memories,
        "per_request": args.per_request,
        "embedder": "hashing",
        "rounds": rounds,
    }
    (RESULTS / "write_cpu.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
