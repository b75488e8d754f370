"""Document neighbour: does one tenant's long upload hold up another tenant's memory writes?

Run: python bench/document_neighbor.py [--pages 150] [--b-seconds 20] [--embedder minilm]
Needs KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI (`python -m bench` provides them).

The whole platform (one partition per topic, as the end-to-end tests run it). Tenant B writes
2 memories a second, one POST each, and recalls once a second:

1. alone for `--b-seconds`: B's store→recallable (POST to `memory.stored` on Kafka);
2. while tenant A uploads `--pages` pages of prose documents at once, until every passage has
   its vector: B's store→recallable again, and A's passages per second.

A document's passages are embedded by the same embedding service as B's memories. Target: B's
p95 beside the upload ≤ 2x alone. Writes bench-results/document_neighbor.json.
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

from bench._hops import Arrivals  # noqa: E402
from bench.memory_recall import stored_listener  # noqa: E402
from bench.noisy_neighbor import interactive, ratio, tenant  # noqa: E402
from bench.passages import Indexed, documents, index, platform_env  # noqa: E402
from tests.conftest import Infra  # noqa: E402
from tests.support.platform import start_platform, stop_platform  # noqa: E402

RESULTS = ROOT / "bench-results"
INDEX_TIMEOUT = 3600.0


async def b_writes(
    gateway: Any, seen: dict[str, float], name: str, until: asyncio.Event
) -> dict[str, Any]:
    """B's writes and recalls on a new tenant until `until` is set."""
    arrivals: Arrivals = {}
    return await interactive(await tenant(gateway, name), seen, until, arrivals)


async def run(pages: int, b_seconds: float, embedder: str, root: Path) -> dict[str, Any]:
    """B alone, then B beside A's upload, on one platform."""
    infra = Infra(os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["MONGODB_URI"])
    platform = start_platform(infra, root, **platform_env(embedder))
    indexed = Indexed(platform)
    seen: dict[str, float] = {}
    ready = asyncio.Event()
    listener = asyncio.create_task(stored_listener(platform.env, seen, ready))
    try:
        await ready.wait()
        gateway = platform.services["gateway"]
        done = asyncio.Event()
        alone = asyncio.create_task(b_writes(gateway, seen, "b-alone", done))
        await asyncio.sleep(b_seconds)
        done.set()
        solo = await alone
        print(json.dumps({"b_alone": solo["store_to_recallable"]}), flush=True)
        done = asyncio.Event()
        beside = asyncio.create_task(b_writes(gateway, seen, "b-beside", done))
        with platform.client(timeout=120) as api:
            started = time.perf_counter()
            _, passages, took = await asyncio.to_thread(
                index, api, indexed, documents(pages, 0), INDEX_TIMEOUT
            )
        await asyncio.sleep(max(0.0, started + b_seconds - time.perf_counter()))
        done.set()
        mixed = await beside
        print(json.dumps({"b_beside_upload": mixed["store_to_recallable"]}), flush=True)
    finally:
        listener.cancel()
        indexed.close()
        stop_platform(platform)
    return {
        "embedder": embedder,
        "pages": pages,
        "b_alone": solo,
        "b_beside_upload": mixed,
        "upload": {
            "passages": len(passages),
            "seconds": round(took, 1),
            "passages_per_s": round(len(passages) / took, 1),
        },
        "ratios": {
            "b_p95_beside_over_alone": ratio(
                mixed["store_to_recallable"]["p95_ms"], solo["store_to_recallable"]["p95_ms"]
            )
        },
        "targets": {"b_p95_beside_over_alone": "<= 2"},
    }


def main(argv: list[str] | None = None) -> int:
    """Run, print the figures and write bench-results/document_neighbor.json."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=150, help="tenant A's upload, in pages")
    parser.add_argument("--b-seconds", type=float, default=20.0, help="tenant B's solo run")
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="engram-bench-documents-") as root:
        result = asyncio.run(run(args.pages, args.b_seconds, args.embedder, Path(root)))
    result["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    print(
        f"B store→recallable ms: alone {result['b_alone']['store_to_recallable']}, "
        f"beside the upload {result['b_beside_upload']['store_to_recallable']}"
    )
    print(f"A's upload: {result['upload']}")
    print(json.dumps(result["ratios"]))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "document_neighbor.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
