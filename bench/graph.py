"""Issue 42's knowledge graph at scale: import, traversal, paths and prune through the gateway.

Run: python bench/graph.py [--entities 100000] [--queries 300] [--paths 200] [--prune 10000]

Starts the whole platform (every service a process, one partition per topic, as the e2e tests
do) against the broker and database in KAFKA_BOOTSTRAP_SERVERS / MONGODB_URI, with the hashing
embedder and enrichment's knowledge recall off (`ENGRAM_ENRICHMENT_RECALL=false`, unless
`--recall`): embedding every fact and section would dominate the import and the figure would
measure vectors, not relations.

A synthetic supply graph is generated from `--seed`: 2% suppliers, 1% warehouses, 1% carriers
and 96% shipments. Each shipment references its supplier (`supplied_by`), warehouse
(`delivered_to`), carrier (`carried_by`) and two other warehouses it is routed through (`lanes`,
a list-valued reference, `routed_via`); each warehouse is served by 20 carriers (`carrier_ids`,
`served_by`). That is 5 relations per entity: 100k entities give 500k relations.

1. Imports the same rows into two tenants, back to back, through `POST /v1/records:import`
   (5,000 rows a request, suppliers, warehouses and carriers before shipments): first a tenant
   whose types declare no references (the reference fields are plain attributes), then one whose
   types declare them (`PUT /v1/schema/types/{name}`). Each import is timed from its first
   request until enrichment has committed every record event (its consumer group's offset on the
   record-events topic reaches the topic's end, and the end is past every record the imports
   wrote): records/s of each, and their ratio (target >= 0.8).
2. `GET /v1/knowledge/entities/{id}/relations?direction=both&depth=2` from `--queries` random
   entities, a quarter of each type (p50/p95 target <= 30 ms), and `POST /v1/knowledge/paths`
   (`max_depth` `--path-depth`) between `--paths` random supplier/carrier pairs (p95 <= 100 ms).
3. `POST /v1/prune` of `--prune` shipment records by id, timed until the job completes; the job
   must be `verified_empty` with no relation rows left citing them.

The run's databases are dropped at the end unless `--keep`. Prints the figures as JSON, writes bench-results/graph.json and bench-results/graph.png (the
latency distributions, when matplotlib is installed). Exits non-zero if an import, the
verification or a relation count fails; missed latency or ratio targets are reported, not fatal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from pymongo import MongoClient

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.prune_cascade import quiet  # noqa: E402
from engram_extraction.domain.naming import entity_key, record_id  # noqa: E402
from tests.conftest import Infra  # noqa: E402
from tests.support.platform import Platform, start_platform, stop_platform  # noqa: E402
from tests.support.tenants import create_tenant, tenant_of  # noqa: E402

RESULTS = ROOT / "bench-results"
SOURCE = "graph-bench"
BATCH = 5000
SERVED_BY = 20
LANES = 2
WARM_UP = 20
TARGETS = {"depth2_p95_ms": 30.0, "paths_p95_ms": 100.0, "import_ratio": 0.8}
PLATFORM_ENV = {
    "ENGRAM_EMBEDDING_EMBEDDER": "hashing",
    "ENGRAM_MEMORY_EMBEDDER": "hashing",
    "ENGRAM_ENRICHMENT_EMBEDDER": "hashing",
    "ENGRAM_LOG_LEVEL": "WARNING",
    "ENGRAM_TRACING": "false",
}
REFERENCES: dict[str, list[dict[str, Any]]] = {
    "supplier": [],
    "carrier": [],
    "warehouse": [
        {"field": "carrier_ids", "to": "carrier", "predicate": "served_by", "many": True},
    ],
    "shipment": [
        {"field": "supplier_id", "to": "supplier", "predicate": "supplied_by"},
        {"field": "warehouse_id", "to": "warehouse", "predicate": "delivered_to"},
        {"field": "carrier_id", "to": "carrier", "predicate": "carried_by"},
        {"field": "lanes", "to": "warehouse", "predicate": "routed_via", "many": True},
    ],
}
"""The types each tenant declares; the tenant without references declares them without."""
ORDER = ("supplier", "warehouse", "carrier", "shipment")


@dataclass
class Graph:
    """The generated rows per type and the relations they declare."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    relations: int = 0

    @property
    def entities(self) -> int:
        return sum(len(rows) for rows in self.rows.values())

    def ids(self, record_type: str) -> list[str]:
        return [f"{record_type}:{row['id']}" for row in self.rows[record_type]]


def log(message: str) -> None:
    """A progress line on stderr (the figures go to stdout)."""
    print(f"[graph {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def generate(entities: int, seed: int) -> Graph:
    """A supply graph of about `entities` entities and 5 relations per entity, from `seed`."""
    rng = random.Random(seed)
    suppliers = max(2, entities * 2 // 100)
    warehouses = max(LANES + 1, entities // 100)
    carriers = max(SERVED_BY, entities // 100)
    shipments = max(1, entities - suppliers - warehouses - carriers)
    graph = Graph()
    countries = ["SE", "LV", "PL", "DE", "FI", "EE", "LT", "DK"]
    graph.rows["supplier"] = [
        {"id": f"s{i}", "name": f"Supplier {i}", "country": countries[i % len(countries)]}
        for i in range(suppliers)
    ]
    graph.rows["carrier"] = [{"id": f"c{i}", "name": f"Carrier {i}"} for i in range(carriers)]
    graph.rows["warehouse"] = []
    for i in range(warehouses):
        served = rng.sample(range(carriers), SERVED_BY)
        graph.rows["warehouse"].append(
            {
                "id": f"w{i}",
                "name": f"Warehouse {i}",
                "city": f"City {i % 97}",
                "carrier_ids": ";".join(f"c{c}" for c in served),
            }
        )
        graph.relations += SERVED_BY
    graph.rows["shipment"] = []
    for i in range(shipments):
        lanes = rng.sample(range(warehouses), LANES)
        graph.rows["shipment"].append(
            {
                "id": f"sh{i}",
                "supplier_id": f"s{rng.randrange(suppliers)}",
                "warehouse_id": f"w{rng.randrange(warehouses)}",
                "carrier_id": f"c{rng.randrange(carriers)}",
                "lanes": ";".join(f"w{w}" for w in lanes),
                "weight_kg": rng.randrange(10, 2000),
            }
        )
        graph.relations += 3 + LANES
    return graph


def declare(client: httpx.Client, with_references: bool) -> None:
    """The tenant's four types, with or without their reference fields."""
    for name, references in REFERENCES.items():
        body: dict[str, Any] = {"id_fields": ["id"], "required_fields": ["id"]}
        if with_references and references:
            body["references"] = references
        answer = client.put(f"/v1/schema/types/{name}", json=body)
        answer.raise_for_status()


def batches(graph: Graph) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(type, rows) for each import request, referenced types first."""
    for record_type in ORDER:
        rows = graph.rows[record_type]
        for first in range(0, len(rows), BATCH):
            yield record_type, rows[first : first + BATCH]


async def record_events(
    admin: AIOKafkaAdminClient, consumer: AIOKafkaConsumer, prefix: str
) -> tuple[int, int]:
    """(end offset, enrichment's committed offset) summed over the record-events topic (the
    platform's one partition: asking the shared broker for every topic's metadata timed out)."""
    topic = f"{prefix}engram.record-events.v1"
    partitions = int(os.environ.get("ENGRAM_TOPIC_PARTITIONS", "1"))
    ends = await consumer.end_offsets([TopicPartition(topic, p) for p in range(partitions)])
    committed = await admin.list_consumer_group_offsets(f"{prefix}engram-enrichment")
    done = sum(max(0, meta.offset) for tp, meta in committed.items() if tp.topic == topic)
    return sum(ends.values()), done


def wait_imports(client: httpx.Client, import_ids: list[str], timeout: float) -> int:
    """Until every import is completed; the records they wrote (rejected rows fail the run)."""
    deadline = time.monotonic() + timeout
    written = 0
    pending = list(import_ids)
    while pending:
        if time.monotonic() > deadline:
            raise SystemExit(f"{len(pending)} imports never completed within {timeout:.0f}s")
        status = client.get(f"/v1/records:import/{pending[0]}").json()
        if status.get("status") == "failed":
            raise SystemExit(f"import {pending[0]} failed: {status}")
        if status.get("status") != "completed":
            time.sleep(0.25)
            continue
        if status.get("rejected_count"):
            raise SystemExit(f"import {pending[0]} rejected rows: {status.get('rejected')}")
        written += int(status["record_count"])
        pending.pop(0)
    return written


async def wait_applied(prefix: str, base_end: int, at_least: int, within: float) -> None:
    """Until the record-events topic holds `at_least` more events than at `base_end` and
    enrichment has committed up to its end: every record applied, its writes durable."""
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await admin.start()
    await consumer.start()
    try:
        deadline = time.monotonic() + within
        while True:
            end, done = await record_events(admin, consumer, prefix)
            if end - base_end >= at_least and done >= end:
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"enrichment applied {done} of {end} record events in time")
            await asyncio.sleep(0.25)
    finally:
        await consumer.stop()
        await admin.close()


async def topic_end(prefix: str) -> int:
    """The record-events topic's end offset now (0 before it exists)."""
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await admin.start()
    await consumer.start()
    try:
        return (await record_events(admin, consumer, prefix))[0]
    finally:
        await consumer.stop()
        await admin.close()


def import_graph(client: httpx.Client, graph: Graph, prefix: str, timeout: float) -> dict[str, Any]:
    """Import every row, timed until enrichment has applied them all."""
    base_end = asyncio.run(topic_end(prefix))
    started = time.monotonic()
    import_ids: list[str] = []
    for record_type, rows in batches(graph):
        answer = client.post(
            "/v1/records:import",
            json={"source": SOURCE, "record_type": record_type, "rows": rows},
        )
        answer.raise_for_status()
        import_ids.append(answer.json()["import_id"])
    posted = time.monotonic() - started
    log(f"{len(import_ids)} imports posted in {posted:.1f}s")
    written = wait_imports(client, import_ids, timeout)
    extracted = time.monotonic() - started
    log(f"{written} records extracted after {extracted:.1f}s")
    asyncio.run(wait_applied(prefix, base_end, written, timeout))
    elapsed = time.monotonic() - started
    return {
        "records": written,
        "requests": len(import_ids),
        "posted_s": round(posted, 1),
        "extracted_s": round(extracted, 1),
        "applied_s": round(elapsed, 1),
        "records_per_s": round(written / elapsed, 1),
    }


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50/p95/max in milliseconds."""
    arr = np.array(samples) * 1000
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 1),
        "p95_ms": round(float(np.percentile(arr, 95)), 1),
        "max_ms": round(float(arr.max()), 1),
        "n": len(samples),
    }


def timed(
    client: httpx.Client, method: str, url: str, **kwargs: Any
) -> tuple[float, dict[str, Any]]:
    """Seconds one request took, and its body (a non-200 fails the run)."""
    begun = time.perf_counter()
    answer = client.request(method, url, **kwargs)
    took = time.perf_counter() - begun
    if answer.status_code != 200:
        raise SystemExit(
            f"{answer.request.method} {answer.request.url}: {answer.status_code} {answer.text[:300]}"
        )
    body: dict[str, Any] = answer.json()
    return took, body


def traversals(
    client: httpx.Client, graph: Graph, count: int, rng: random.Random
) -> dict[str, Any]:
    """Depth-2 relations from `count` random entities, a quarter of each type."""
    starts = [rng.choice(graph.ids(ORDER[i % len(ORDER)])) for i in range(count + WARM_UP)]
    seconds: list[float] = []
    by_type: dict[str, list[float]] = {t: [] for t in ORDER}
    listed: list[int] = []
    truncated = 0
    for n, entity in enumerate(starts):
        took, body = timed(
            client,
            "GET",
            f"/v1/knowledge/entities/{entity}/relations",
            params={"direction": "both", "depth": 2},
        )
        if n < WARM_UP:
            continue
        seconds.append(took)
        by_type[entity.split(":", 1)[0]].append(took)
        listed.append(len(body["relations"]))
        truncated += bool(body.get("truncated"))
    return {
        **percentiles(seconds),
        "by_type": {t: percentiles(s) for t, s in by_type.items() if s},
        "relations_per_page_mean": round(float(np.mean(listed)), 1),
        "truncated": truncated,
        "samples_s": seconds,
    }


def paths(
    client: httpx.Client, graph: Graph, count: int, depth: int, rng: random.Random
) -> dict[str, Any]:
    """Shortest paths between `count` random supplier/carrier pairs."""
    suppliers, carriers = graph.ids("supplier"), graph.ids("carrier")
    pairs = [(rng.choice(suppliers), rng.choice(carriers)) for _ in range(count + WARM_UP)]
    seconds: list[float] = []
    lengths: dict[str, int] = {}
    for n, (start, goal) in enumerate(pairs):
        took, body = timed(
            client,
            "POST",
            "/v1/knowledge/paths",
            json={"from": start, "to": goal, "max_depth": depth},
        )
        if n < WARM_UP:
            continue
        seconds.append(took)
        length = str(body.get("length")) if body.get("paths") else "none"
        lengths[length] = lengths.get(length, 0) + 1
    return {**percentiles(seconds), "max_depth": depth, "lengths": lengths, "samples_s": seconds}


def prune(
    client: httpx.Client, graph: Graph, tenant_id: str, count: int, timeout: float
) -> dict[str, Any]:
    """Prune the first `count` shipments' records by id, until the job completes."""
    shipments = graph.rows["shipment"][:count]
    ids = [
        record_id(tenant_id, f"import:{SOURCE}", "shipment", entity_key(row["id"]))
        for row in shipments
    ]
    started = time.monotonic()
    answer = client.post("/v1/prune", json={"record_ids": ids})
    answer.raise_for_status()
    job_id = answer.json()["prune_job_id"]
    job: dict[str, Any] = {}
    while time.monotonic() - started < timeout:
        job = client.get(f"/v1/prune-jobs/{job_id}").json()
        if job["status"] == "completed":
            break
        time.sleep(0.2)
    else:
        raise SystemExit(f"the prune never completed within {timeout:.0f}s: {job}")
    seconds = time.monotonic() - started
    left = job.get("verification", {}).get("references", {}).get("enrichment", {})
    gone = client.get(f"/v1/knowledge/entities/shipment:{shipments[0]['id']}/relations")
    return {
        "records": len(ids),
        "relations_withdrawn_expected": len(ids) * (3 + LANES),
        "prune_to_completed_s": round(seconds, 2),
        "verified_empty": job.get("verified_empty"),
        "relations_left": left.get("relations"),
        "counts": job.get("counts"),
        "pruned_entity_relations_status": gone.status_code,
    }


def relation_rows(platform: Platform, tenant_id: str) -> int:
    """Relation rows stored for the tenant (read once, after the timings)."""
    database = f"{platform.env['ENGRAM_DATABASE_PREFIX']}enrichment"
    with MongoClient[dict[str, Any]](platform.env["MONGODB_URI"]) as mongo:
        return int(mongo[database]["relations"].count_documents({"tenant_id": tenant_id}))


def drop_databases(platform: Platform) -> None:
    """The run's databases (every service's, by the platform's prefix): a full-size run leaves
    about a million documents on the shared server otherwise."""
    prefix = platform.env["ENGRAM_DATABASE_PREFIX"]
    with MongoClient[dict[str, Any]](platform.env["MONGODB_URI"]) as mongo:
        for name in mongo.list_database_names():
            if name.startswith(prefix):
                mongo.drop_database(name)


def plot(result: dict[str, Any], target: Path) -> bool:
    """Histograms of the depth-2 and path latencies; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax, key, title, goal in (
        (axes[0], "depth2", "relations, depth 2, both ways", TARGETS["depth2_p95_ms"]),
        (
            axes[1],
            "paths",
            f"paths, max_depth {result['paths']['max_depth']}",
            TARGETS["paths_p95_ms"],
        ),
    ):
        ms = np.array(result[key]["samples_s"]) * 1000
        ax.hist(ms, bins=40, color="tab:blue", alpha=0.8)
        ax.axvline(
            result[key]["p50_ms"], color="tab:green", label=f"p50 {result[key]['p50_ms']} ms"
        )
        ax.axvline(
            result[key]["p95_ms"], color="tab:orange", label=f"p95 {result[key]['p95_ms']} ms"
        )
        ax.axvline(goal, color="tab:red", linestyle="--", label=f"p95 target {goal:g} ms")
        ax.set_title(f"{title} ({result['entities']:,} entities)")
        ax.set_xlabel("ms through the gateway")
        ax.set_ylabel("requests")
        ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return True


def run(args: argparse.Namespace) -> dict[str, Any]:
    """One platform: both imports, the traversals and paths, the prune."""
    graph = generate(args.entities, args.seed)
    rng = random.Random(args.seed + 1)
    infra = Infra(os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["MONGODB_URI"])
    env = dict(PLATFORM_ENV)
    if not args.recall:
        env["ENGRAM_ENRICHMENT_RECALL"] = "false"
    result: dict[str, Any] = {
        "entities": graph.entities,
        "relations_declared": graph.relations,
        "by_type": {t: len(graph.rows[t]) for t in ORDER},
        "seed": args.seed,
        "recall": args.recall,
        "embedder": "hashing",
        "load_before": os.getloadavg()[0],
    }
    with tempfile.TemporaryDirectory(prefix="engram-graph-bench-") as root:
        log(f"{graph.entities} entities, {graph.relations} relations; starting the platform")
        platform = start_platform(infra, Path(root), **env)
        try:
            plain_key = create_tenant(platform.env, "graph-plain")
            graph_key = create_tenant(platform.env, "graph")
            tenant_id = tenant_of(platform.env, graph_key)
            with platform.client(plain_key, timeout=120) as plain:
                declare(plain, with_references=False)
                result["import_without_references"] = import_graph(
                    plain, graph, platform.prefix, args.timeout
                )
            print(
                json.dumps({"import_without_references": result["import_without_references"]}),
                flush=True,
            )
            with platform.client(graph_key, timeout=120) as client:
                declare(client, with_references=True)
                result["import_with_references"] = import_graph(
                    client, graph, platform.prefix, args.timeout
                )
                print(
                    json.dumps({"import_with_references": result["import_with_references"]}),
                    flush=True,
                )
                result["import_ratio"] = round(
                    result["import_with_references"]["records_per_s"]
                    / result["import_without_references"]["records_per_s"],
                    3,
                )
                asyncio.run(quiet(infra.bootstrap, platform.prefix, args.timeout))
                result["relations_stored"] = relation_rows(platform, tenant_id)
                log(f"{result['relations_stored']} relations stored; traversals")
                result["depth2"] = traversals(client, graph, args.queries, rng)
                result["paths"] = paths(client, graph, args.paths, args.path_depth, rng)
                asyncio.run(quiet(infra.bootstrap, platform.prefix, args.timeout))
                log("prune")
                result["prune"] = prune(client, graph, tenant_id, args.prune, args.timeout)
                result["relations_stored_after_prune"] = relation_rows(platform, tenant_id)
            result["dead_letters"] = platform.logs().count("dead-lettered")
        finally:
            stop_platform(platform)
            if not args.keep:
                drop_databases(platform)
    result["load_after"] = os.getloadavg()[0]
    result["targets"] = TARGETS
    result["met"] = {
        "depth2_p95": result["depth2"]["p95_ms"] <= TARGETS["depth2_p95_ms"],
        "paths_p95": result["paths"]["p95_ms"] <= TARGETS["paths_p95_ms"],
        "import_ratio": result["import_ratio"] >= TARGETS["import_ratio"],
        "prune_verified_empty": bool(result["prune"]["verified_empty"])
        and result["prune"]["relations_left"] == 0,
    }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--entities", type=int, default=100_000, help="entities to generate (5 relations each)"
    )
    parser.add_argument("--queries", type=int, default=300, help="depth-2 relation listings")
    parser.add_argument("--paths", type=int, default=200, help="supplier/carrier path queries")
    parser.add_argument("--path-depth", type=int, default=4, help="paths' max_depth (1-4)")
    parser.add_argument(
        "--prune", type=int, default=10_000, help="shipment records to prune (at most all)"
    )
    parser.add_argument("--seed", type=int, default=42, help="the graph's and the samples' seed")
    parser.add_argument(
        "--recall", action="store_true", help="keep enrichment's knowledge recall (embeddings) on"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the run's databases (dropped at the end)"
    )
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a stage may take")
    args = parser.parse_args()
    result = run(args)
    shown = {
        k: ({kk: vv for kk, vv in v.items() if kk != "samples_s"} if isinstance(v, dict) else v)
        for k, v in result.items()
    }
    print(json.dumps(shown, indent=2), flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "graph.json").write_text(json.dumps(result, indent=2))
    print(f"wrote {RESULTS / 'graph.json'}")
    if plot(result, RESULTS / "graph.png"):
        print(f"plot: {RESULTS / 'graph.png'}")
    expected = result["relations_declared"]
    ok = (
        result["relations_stored"] == expected
        and result["met"]["prune_verified_empty"]
        and result["dead_letters"] == 0
    )
    if not ok:
        print(
            f"FAILED: relations {result['relations_stored']} of {expected}, prune {result['prune']}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
