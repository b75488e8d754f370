"""Time from `POST /v1/prune` to `verified_empty` for N records with derived facts and memories.

Starts the whole platform (every service a process) against the broker and database in
KAFKA_BOOTSTRAP_SERVERS / MONGODB_URI, imports N records through the gateway, waits until
enrichment has derived their facts, stores a memory derived from every tenth record, then
prunes all N records by id and waits for the job to report `verified_empty`. The hashing
embedder is used so the figure measures the cascade, not MiniLM.
"""

from __future__ import annotations

import argparse
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
from tests.support.platform import start_platform, stop_platform  # noqa: E402

HASHING = {
    "ENGRAM_EMBEDDING_EMBEDDER": "hashing",
    "ENGRAM_MEMORY_EMBEDDER": "hashing",
    "ENGRAM_ENRICHMENT_EMBEDDER": "hashing",
}


def wait(check: Any, what: str, timeout: float) -> Any:
    """Poll until truthy; fail naming what never happened."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise TimeoutError(what)


def record_ids(client: httpx.Client) -> list[str]:
    """Every shipment record id, following the cursor."""
    ids: list[str] = []
    cursor = None
    while True:
        params = {"type": "shipment", "limit": "500", **({"cursor": cursor} if cursor else {})}
        page = client.get("/v1/records", params=params).json()
        ids += [r["record_id"] for r in page["records"]]
        cursor = page["next_cursor"]
        if not cursor:
            return ids


def run(client: httpx.Client, size: int, timeout: float) -> dict[str, Any]:
    """One measured prune of `size` records; returns the figures."""
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
    ids: list[str] = wait(
        lambda: found if len(found := record_ids(client)) >= size else None,
        "all records",
        timeout,
    )
    last = f"shipment:s{size - 1}"
    wait(lambda: client.get(f"/v1/knowledge/entities/{last}").status_code == 200, "facts", timeout)
    derived_at = time.monotonic()
    agent = client.post("/v1/agents", json={"name": "bench"}).json()["agent_id"]
    for record_id in ids[::10]:
        client.post(
            f"/v1/agents/{agent}/memories",
            json={"content": f"note about {record_id}", "derived_from": [record_id]},
        ).raise_for_status()
    prune_start = time.monotonic()
    job_id = client.post("/v1/prune", json={"record_ids": ids}).json()["prune_job_id"]
    job = wait(
        lambda: (j := client.get(f"/v1/prune-jobs/{job_id}").json())["status"] == "completed" and j,
        "verified_empty",
        timeout,
    )
    prune_seconds = time.monotonic() - prune_start
    return {
        "records": size,
        "setup_seconds": round(derived_at - started, 1),
        "prune_to_verified_seconds": round(prune_seconds, 2),
        "verified_empty": job["verified_empty"],
        "counts": job["counts"],
    }


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
                    result = run(client, size, args.timeout)
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
