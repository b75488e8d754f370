"""`python -m bench [NAME ...]`: run the benchmark scripts against a real broker and database.

Each `bench/<name>.py` is a script that prints its figures and writes
`bench-results/<name>.json` (and PNG plots where it has them). This runner starts Kafka and
FerretDB on free ports (or uses `KAFKA_BOOTSTRAP_SERVERS` / `MONGODB_URI` when set), runs the
scripts one after another with those addresses in the environment, and prints a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "bench-results"


def scripts() -> list[str]:
    """Every benchmark script, by name."""
    return sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_"))


def start_infra(stack: ExitStack) -> dict[str, str]:
    """Addresses of a broker and database for the run, started here unless given."""
    if os.environ.get("KAFKA_BOOTSTRAP_SERVERS") and os.environ.get("MONGODB_URI"):
        return {}
    from engram_devstack.ferret import FerretServer
    from engram_devstack.kafka import KafkaServer
    from engram_devstack.ports import free_ports

    state = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="engram-bench-")))
    kafka_port, controller_port, mongo_port = free_ports(3)
    kafka = KafkaServer(state_dir=state / "kafka", port=kafka_port, controller_port=controller_port)
    ferret = FerretServer(state_dir=state / "ferretdb", port=mongo_port)
    for server in (kafka, ferret):
        server.ensure_installed()
        server.start()
        stack.callback(server.stop)
    for server in (kafka, ferret):
        server.wait_ready(120)
    return {"KAFKA_BOOTSTRAP_SERVERS": kafka.address, "MONGODB_URI": ferret.uri}


def main(argv: list[str] | None = None) -> int:
    """Run the chosen benchmarks (all by default); exit non-zero if any failed."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default: all of {scripts()})")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(scripts()))
        return 0
    chosen = args.names or scripts()
    unknown = sorted(set(chosen) - set(scripts()))
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    RESULTS.mkdir(exist_ok=True)
    failed: list[str] = []
    with ExitStack() as stack:
        env = {**os.environ, **start_infra(stack), "PYTHONPATH": str(HERE.parent)}
        for name in chosen:
            print(f"[bench] {name}: running", flush=True)
            started = time.monotonic()
            code = subprocess.call([sys.executable, str(HERE / f"{name}.py")], env=env)
            took = time.monotonic() - started
            print(
                f"[bench] {name}: {'ok' if code == 0 else f'FAILED ({code})'} in {took:.1f}s",
                flush=True,
            )
            if code:
                failed.append(name)
    summary = {
        p.stem: json.loads(p.read_text())
        for p in sorted(RESULTS.glob("*.json"))
        if p.stem != "summary"
    }
    (RESULTS / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    print(f"[bench] results in {RESULTS}/ (summary.json); failed: {failed or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
