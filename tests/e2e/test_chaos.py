"""Issue 8: a seeded workload under seeded `kill -9`s ends where the same workload ends without.

Two cases (about 2-2.5 minutes each on 2 cores; `make chaos` runs just this module): one
instance of every service, and two instances of ingest, extraction, embedding and the gateway,
each pair in one consumer group, over 2-partition topics. memory and enrichment stay single
there: their vectors live in the embedded Qdrant engine, which only one process may open
(scaling them out needs a Qdrant server, QDRANT_URL).

Replay a failure with the seed it printed: `ENGRAM_CHAOS_SEED=<seed> pytest tests/e2e/test_chaos.py`.
The kill schedule is drawn from the seed too; when each kill lands relative to the workload
depends on timing, so a replay repeats the choices, not the exact interleaving.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Infra
from tests.support import chaos
from tests.support.platform import Platform, start_platform, stop_platform
from tests.support.polling import until

SEED = int(os.environ.get("ENGRAM_CHAOS_SEED") or random.SystemRandom().randrange(1, 1_000_000))


@pytest.fixture(params=["single", "scaled"], scope="module")
def chaos_platform(
    request: pytest.FixtureRequest, infra: Infra, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    """The platform, once with one instance per service and once with two per consumer group."""
    scaled = request.param == "scaled"
    root = tmp_path_factory.mktemp(f"chaos-{request.param}")
    running = start_platform(
        infra,
        root,
        ENGRAM_TOPIC_PARTITIONS="2" if scaled else "1",
        ENGRAM_ENRICHMENT_MAX_TOP_K="1000",
    )
    try:
        if scaled:
            chaos.add_instances(running, chaos.SCALABLE, root)
        yield running
    finally:
        stop_platform(running)


def settled(platform: Platform, client: Any, agents: tuple[str, ...]) -> dict[str, Any]:
    """Wait until nothing is in flight and two snapshots a moment apart agree."""
    previous: dict[str, Any] | None = None
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        until(lambda: chaos.quiet(platform), "consumers caught up, outboxes empty", 240)
        current = chaos.snapshot(client, agents)
        if current == previous:
            return current
        previous = current
        time.sleep(2)
    raise AssertionError("the state kept changing")


def converged(
    platform: Platform, client: Any, agents: tuple[str, ...], expected: dict[str, Any]
) -> dict[str, Any]:
    """The chaos run's settled state; given time to reach `expected`, never forced to."""
    deadline = time.monotonic() + 120
    current = settled(platform, client, agents)
    while current != expected and time.monotonic() < deadline:
        time.sleep(3)
        current = settled(platform, client, agents)
    return current


def test_a_seeded_workload_under_kill_9_ends_in_the_fault_free_state(
    chaos_platform: Platform,
) -> None:
    platform = chaos_platform
    workload = chaos.make_workload(SEED)
    scaled = any("#" in name for name in platform.services)
    label = "scaled" if scaled else "single"
    print(f"\n[chaos] seed={SEED} case={label} (replay: ENGRAM_CHAOS_SEED={SEED})", flush=True)
    lock = threading.Lock()

    baseline_client, baseline = chaos.run_workload(platform, workload, lock)
    with baseline_client:
        expected = settled(platform, baseline_client, workload.agents)
    print(f"[chaos] fault-free run: {baseline.seconds:.1f}s", flush=True)

    before = chaos.applied_counts(platform)
    offsets = chaos.partition_offsets(platform)
    monkey = chaos.ChaosMonkey(platform, SEED, lock)
    monkey.start()
    try:
        chaos_client, run = chaos.run_workload(platform, workload, lock)
    finally:
        kills = monkey.stop()
    with chaos_client:
        found = converged(platform, chaos_client, workload.agents, expected)
    applied = {s: n - before[s] for s, n in chaos.applied_counts(platform).items()}
    split = {
        service: {f"p{p}": n - offsets[service].get(p, 0) for p, n in sorted(per.items())}
        for service, per in chaos.partition_offsets(platform).items()
    }

    report = {
        "seed": SEED,
        "case": label,
        "instances": sorted(platform.services),
        "workload_seconds": {
            "fault_free": round(baseline.seconds, 1),
            "chaos": round(run.seconds, 1),
        },
        "kills": [(k.at, k.victim) for k in kills],
        "kills_during_workload": sum(1 for k in kills if k.at <= run.seconds),
        "restarts": {name: proc.starts - 1 for name, proc in sorted(platform.services.items())},
        "events_applied_per_service": applied,
        "events_per_second_per_service": {s: round(n / run.seconds, 1) for s, n in applied.items()},
        "messages_per_partition_per_service": split,
        "fault_free": chaos.summary(expected),
        "chaos": chaos.summary(found),
        "prune_jobs": [
            {k: job[k] for k in ("status", "verified_empty", "counts")}
            for job in baseline.prune_jobs + run.prune_jobs
        ],
    }
    print("[chaos] " + json.dumps(report, sort_keys=True), flush=True)

    for job in baseline.prune_jobs + run.prune_jobs:
        assert job["status"] == "completed" and job["verified_empty"] is True, (SEED, job)
    counts = (
        [job["counts"] for job in baseline.prune_jobs],
        [job["counts"] for job in run.prune_jobs],
    )
    assert counts[0] == counts[1], (SEED, "prune job counts per stage differ", counts)
    assert chaos.duplicates(expected) == {}, (SEED, "fault-free", chaos.duplicates(expected))
    assert chaos.duplicates(found) == {}, (SEED, "chaos", chaos.duplicates(found))
    assert found == expected, (SEED, chaos.difference(expected, found))
    assert sum(expected["memory_vectors"].values()) > 0 and expected["knowledge_vectors"]
