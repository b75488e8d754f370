"""Growth benchmark: does the platform slow down as memories and records pile up?

Run: python bench/growth.py [--sizes 0,50000,200000] [--writes 3000] [--embedder minilm]
Needs KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI (`python -m bench` provides them).
Smoke run: python bench/growth.py --sizes 0,2000 --writes 600 --window 150 --prune-records 100

For each size N, on fresh topics and databases, the whole platform (every service a process,
tracing on as `make run` deploys it) is given N memories and N records already stored, then:

1. Sustained memory writes/s through the gateway: `:batch` POSTs of 50 in a closed loop (at most
   --window memories posted and not yet stored, as bench/memory_recall.py measures them), beside
   the CPU each process and the memory service's database calls spent per write.
2. Recall p95 through the gateway (query embedding included): the written agent's (it holds the
   same measured writes at every size, so this is the store growing around one agent: the
   target), and the preloaded agents' (each holds a tenth of the preloaded memories, none at 0:
   the agent itself growing).
3. Listing p95 (a page of 50; `rows` is what a page held): the written agent's memories
   (`status=active`; it holds the measured writes at every size), a preloaded agent's, records
   by `type`, records by `document_id`, and the unfiltered record listing beside them. Each is
   bounded by --listing-seconds, so a listing that scans shows few samples.
4. A prune of --prune-records records imported through the gateway (facts derived by
   enrichment, a memory derived from every tenth): seconds from `POST /v1/prune` to
   `verified_empty`, bounded by --prune-timeout.

The N memories are written as the memory service writes them (`MemoryRows.open_many` with the
fields its handler records, status `active`, its dedup slots, the applied marks of each
memory's two inputs; the gateway's submission rows) over
10 agents, their points by the service's own vector writer (bench/_memory_points.py) from pool
vectors plus noise. The N records are written by extraction's own store
(`RecordStore.write`: heads and revisions, then each document's
manifest), 1,000 per document over five types; enrichment holds no facts for them. A pymongo
listener (bench/_probe/sitecustomize.py) tallies every service's database calls; the result
lists the memory service's per write, by command and collection, at each size.

Writes bench-results/growth.json and growth.png (when matplotlib is installed).
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
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._cpus import infra_ports, listening_pids  # noqa: E402
from bench._memory_points import write_collection  # noqa: E402
from bench.memory_recall import (  # noqa: E402
    BATCH,
    gateway_recalls,
    percentiles,
    post_memory_batches,
    sentences,
    standalone_rate,
    stored_listener,
    sustained_writes,
    wait_stored,
)
from bench.prune_cascade import quiet  # noqa: E402
from engram_embedders import make_embedder  # noqa: E402
from engram_embedders.factory import EmbedderKind  # noqa: E402
from engram_events import new_event  # noqa: E402
from engram_events.catalog import EMBEDDING_COMPUTED, MEMORY_WRITE_REQUESTED  # noqa: E402
from engram_events.payloads.memories import MemoryWriteRequested  # noqa: E402
from engram_extraction.adapters.store import RecordStore  # noqa: E402
from engram_extraction.domain.candidates import Candidate  # noqa: E402
from engram_extraction.domain.records import Source, build  # noqa: E402
from engram_extraction.domain.revisions import plan  # noqa: E402
from engram_extraction.domain.schema import SchemaRegistry  # noqa: E402
from engram_gateway.adapters.submissions import SUBMISSIONS  # noqa: E402
from engram_memory.adapters.dedup import DedupSlots  # noqa: E402
from engram_memory.adapters.rows import MemoryRows  # noqa: E402
from engram_memory.domain.dedup import dedup_key  # noqa: E402
from engram_memory.domain.rows import MemoryRow  # noqa: E402
from engram_memory.domain.writes import row_fields  # noqa: E402
from engram_platform.idempotency import AppliedEvents  # noqa: E402
from engram_platform.mongo import connect_mongo, insert_new  # noqa: E402
from tests.conftest import Infra  # noqa: E402
from tests.support.platform import Platform, start_platform, stop_platform  # noqa: E402
from tests.support.polling import until  # noqa: E402

RESULTS = ROOT / "bench-results"
PROBE = Path(__file__).resolve().parent / "_probe"
AGENTS = 10
RECORD_TYPES = ("shipment", "invoice", "order", "contact", "ticket")
PER_DOCUMENT = 1000
LISTED_DOCUMENT = 99_999
"""The document written at every size beside the preloaded ones, listed by `document_id`."""
CHUNK = 5000
TICKS = os.sysconf("SC_CLK_TCK")


def platform_env(embedder: str, prefix: str, probe: Path) -> dict[str, str]:
    """The services' settings: one embedder everywhere, the database probe on PYTHONPATH (and
    after it a PYTHONPATH given to the bench: another checkout's packages, for before/after)."""
    return {
        "ENGRAM_TOPIC_PREFIX": f"{prefix}.",
        "ENGRAM_DATABASE_PREFIX": f"{prefix}_",
        "ENGRAM_EMBEDDING_EMBEDDER": embedder,
        "ENGRAM_MEMORY_EMBEDDER": embedder,
        "ENGRAM_ENRICHMENT_EMBEDDER": embedder,
        "ENGRAM_LOG_LEVEL": "WARNING",
        "ENGRAM_BENCH_MONGO_PROBE": str(probe),
        "PYTHONPATH": os.pathsep.join(
            str(p) for p in (PROBE, os.environ.get("PYTHONPATH"), ROOT) if p
        ),
    }


def session_cpu() -> dict[int, float]:
    """CPU seconds per session id, over every process (services run in sessions of their own,
    so a service's children, such as the embedder's model process, count with it)."""
    totals: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        totals[int(fields[3])] = (
            totals.get(int(fields[3]), 0.0) + (int(fields[11]) + int(fields[12])) / TICKS
        )
    return totals


def process_cpu(pid: int) -> float:
    """CPU seconds of one process (the database server, with all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Meter:
    """CPU per service and the memory service's database calls, read before and after a span."""

    def __init__(self, platform: Platform, probe: Path) -> None:
        self.platform = platform
        self.probe = probe
        self.servers = listening_pids(infra_ports(platform.env)[-1:])

    def snapshot(self) -> dict[str, Any]:
        """Totals so far (the probe's file is at most a second old)."""
        sessions = session_cpu()
        cpu = {
            name: sessions.get(proc.proc.pid, 0.0)
            for name, proc in self.platform.services.items()
            if proc.proc is not None
        }
        cpu["database_server"] = sum(process_cpu(pid) for pid in self.servers)
        memory = self.platform.services["memory"].proc
        path = self.probe / f"{memory.pid if memory else 0}.json"
        calls = json.loads(path.read_text()) if path.exists() else {}
        return {"cpu": cpu, "calls": calls}

    @staticmethod
    def per_item(before: dict[str, Any], after: dict[str, Any], items: int) -> dict[str, Any]:
        """Milliseconds per item of each process's CPU and of each memory database call."""
        cpu = {
            name: round((after["cpu"][name] - before["cpu"].get(name, 0.0)) * 1000 / items, 3)
            for name in after["cpu"]
        }
        calls = {}
        for key, (count, seconds) in after["calls"].items():
            was = before["calls"].get(key, [0, 0.0])
            if count > was[0]:
                calls[key] = {
                    "calls_per_item": round((count - was[0]) / items, 3),
                    "ms_per_item": round((seconds - was[1]) * 1000 / items, 3),
                    "ms_per_call": round((seconds - was[1]) * 1000 / (count - was[0]), 3),
                }
        ordered = dict(sorted(calls.items(), key=lambda kv: -kv[1]["ms_per_item"]))
        return {
            "cpu_ms_per_write": cpu,
            "memory_db_ms_per_write": round(sum(c["ms_per_item"] for c in calls.values()), 3),
            "memory_db_calls": ordered,
        }


class Pool(NamedTuple):
    """Texts the preloaded memories say, their vectors and the provenance rows record."""

    texts: list[str]
    vectors: np.ndarray
    provenance: dict[str, Any]


async def pool_of(kind: EmbedderKind) -> Pool:
    """Pool texts embedded in this process by an embedder of the services' kind."""
    embedder = make_embedder(kind, threads=1) if kind == "minilm" else make_embedder(kind)
    provenance = {
        **embedder.provenance.model_dump(),
        "fingerprint": embedder.provenance.fingerprint,
    }
    texts = sentences(2000, seed=5)
    vectors = np.asarray((await embedder.embed(texts)).vectors, dtype=np.float32)
    await embedder.aclose()
    return Pool(texts, vectors, provenance)


def memory_vectors(pool: np.ndarray, picks: np.ndarray, seed: int) -> np.ndarray:
    """Unit vectors near the picked pool vectors (embedding every text would take too long)."""
    rng = np.random.default_rng(seed)
    noise = 0.02 * rng.standard_normal((len(picks), pool.shape[1]), np.float32)
    vectors: np.ndarray = pool[picks] + noise
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def write_event(tenant_id: str, agent_id: str, n: int, content: str) -> Any:
    """The `memory.write_requested` the gateway would have published for this memory."""
    payload = MemoryWriteRequested(
        memory_id=f"mem_growth_{n:07d}", agent_id=agent_id, content=content
    )
    return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id=tenant_id)


def submission(tenant_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The gateway's row of an accepted write, as `Submissions.record_many` leaves it."""
    return {
        "_id": f"{tenant_id}:memory:{fields['memory_id']}",
        "tenant_id": tenant_id,
        "kind": "memory",
        "agent_id": fields["agent_id"],
        "updated_at": fields["created_at"],
    }


def memory_chunk(
    tenant_id: str, agents: list[str], pool: Pool, picks: np.ndarray, numbers: range
) -> tuple[list[tuple[dict[str, Any], str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """Rows to open (fields the handler records, then the stored state), dedup claims, and the
    applied marks of each memory's two inputs (its write request and its embedding)."""
    opening, claims, marks = [], [], []
    for n in numbers:
        agent = agents[n % len(agents)]
        content = f"{pool.texts[int(picks[n])]} #{n}"
        event = write_event(tenant_id, agent, n, content)
        fields = row_fields(event)
        fields.update(content=content, metadata={}, metadata_at={})
        fields.update(provenance=pool.provenance, stored_at=datetime.now(UTC))
        opening.append((fields, "active"))
        claims.append((dedup_key(agent, None, None, content), fields["memory_id"]))
        marks.append((str(event.event_id), MEMORY_WRITE_REQUESTED.name))
        marks.append((str(uuid.uuid4()), EMBEDDING_COMPUTED.name))
    return opening, claims, marks


async def preload_memories(
    dbs: tuple[Any, Any],
    tenant_id: str,
    agents: list[str],
    size: int,
    pool: Pool,
    directory: Path,
) -> dict[str, float]:
    """`size` active memories round-robin over `agents`: rows, dedup slots and applied marks as
    the memory service writes them, the gateway's submission rows, then their points."""
    memory_db, gateway_db = dbs
    rows, slots = MemoryRows(memory_db), DedupSlots(memory_db)
    applied = AppliedEvents(memory_db, "memory")
    started = time.perf_counter()
    picks = np.random.default_rng(size).integers(0, len(pool.texts), size)
    stored: list[MemoryRow] = []
    for start in range(0, size, CHUNK):
        numbers = range(start, min(start + CHUNK, size))
        opening, claims, marks = memory_chunk(tenant_id, agents, pool, picks, numbers)
        await slots.claim(tenant_id, claims)
        await applied.mark_many(marks)
        await insert_new(gateway_db[SUBMISSIONS], [submission(tenant_id, f) for f, _ in opening])
        stored += [row for row in await rows.open_many(tenant_id, opening) if row is not None]
    rows_seconds = time.perf_counter() - started
    points_seconds = 0.0
    if stored:
        points_seconds = await write_collection(
            directory, stored, memory_vectors(pool.vectors, picks, size), pool.provenance
        )
    return {"rows_seconds": round(rows_seconds, 1), "points_seconds": round(points_seconds, 1)}


def document_candidates(document: int) -> list[Candidate]:
    """One document's rows: ids, a type each (five types in turn) and a few attributes."""
    return [
        Candidate(
            f"row {n}",
            {
                "id": f"g{document}-{n}",
                "type": RECORD_TYPES[n % len(RECORD_TYPES)],
                "lane": f"lane-{n % 17}",
                "weight": n % 1000,
            },
        )
        for n in range(PER_DOCUMENT)
    ]


def document_id_of(document: int) -> str:
    """The preloaded documents' ids."""
    return f"doc_growth{document:05d}"


async def write_document(
    store: RecordStore, registry: SchemaRegistry, tenant_id: str, document: int, count: int
) -> None:
    """One document's first `count` rows, written as extraction writes an import."""
    document_id = document_id_of(document)
    source = Source(
        tenant_id=tenant_id,
        source_item=document_id,
        default_type="row",
        document_id=document_id,
        document_version="v1",
        source_item_id=document_id,
    )
    built = build(document_candidates(document)[:count], source, registry)
    done = plan(built.drafts, {}, "v1", complete=True)
    now = datetime.now(UTC)
    await store.write(tenant_id, source, done.created, done.revised, now)
    await store.save_manifest(tenant_id, source.source_item, done.manifest, now)


async def preload_records(db: Any, tenant_id: str, size: int) -> float:
    """`size` records, a thousand per document, then the listed document (at every size, so
    each record listing has full pages at 0 too), written by extraction's own store; seconds."""
    store, registry = RecordStore(db), SchemaRegistry()
    started = time.perf_counter()
    for document in range(-(-size // PER_DOCUMENT)):
        count = min(PER_DOCUMENT, size - document * PER_DOCUMENT)
        await write_document(store, registry, tenant_id, document, count)
    await write_document(store, registry, tenant_id, LISTED_DOCUMENT, PER_DOCUMENT)
    return round(time.perf_counter() - started, 1)


def create_agents(client: httpx.Client, count: int) -> list[str]:
    """Agents of the platform's tenant, created through the gateway."""
    return [client.post("/v1/agents", json={}).json()["agent_id"] for _ in range(count)]


def tenant_of(platform: Platform, agent_id: str) -> str:
    """The tenant id behind the platform's key, from the gateway's registry."""
    from pymongo import MongoClient

    client: MongoClient[dict[str, Any]] = MongoClient(platform.env["MONGODB_URI"])
    with client:
        db = client[f"{platform.env['ENGRAM_DATABASE_PREFIX']}gateway"]
        agent = db.agents.find_one({"_id": agent_id})
        assert agent is not None, f"agent {agent_id} is not in the registry"
        return str(agent["tenant_id"])


async def preload(
    platform: Platform, tenant_id: str, agents: list[str], size: int, pool: Pool
) -> dict[str, Any]:
    """Memories (with the memory service stopped: its vector directory is its own) and records."""
    memory = platform.services["memory"]
    memory.stop()
    client = connect_mongo(platform.env["MONGODB_URI"], app_name="bench-growth")
    prefix = platform.env["ENGRAM_DATABASE_PREFIX"]
    try:
        loaded = await preload_memories(
            (client[f"{prefix}memory"], client[f"{prefix}gateway"]),
            tenant_id,
            agents,
            size,
            pool,
            Path(platform.env["ENGRAM_MEMORY_VECTOR_PATH"]),
        )
        loaded["records_seconds"] = await preload_records(
            client[f"{prefix}extraction"], tenant_id, size
        )
    finally:
        client.close()
    memory.start(wait=False)
    memory.wait_ready(600)
    return loaded


def timed_gets(
    client: httpx.Client, path: str, params: dict[str, Any], samples: int, budget: float
) -> dict[str, Any]:
    """Sequential GETs after one warm-up, until `samples` or `budget` seconds; a failed answer
    is counted (with its time) and three end the series."""
    took: list[float] = []
    failures: dict[str, int] = {}
    rows = 0
    deadline = time.monotonic() + budget
    for n in range(samples + 1):
        if n and time.monotonic() > deadline:
            break
        started = time.perf_counter()
        try:
            answer = client.get(path, params=params)
            status = str(answer.status_code)
        except httpx.HTTPError as exc:
            status = type(exc).__name__
        elapsed = time.perf_counter() - started
        if status == "200":
            body = answer.json()
            rows = len(body.get("memories", body.get("records", [])))
        if status != "200":
            failures[status] = failures.get(status, 0) + 1
            if sum(failures.values()) >= 3:
                break
        elif n:
            took.append(elapsed)
    result: dict[str, Any] = {**(percentiles(took) if took else {"n": 0}), "rows": rows}
    return {**result, "failures": failures} if failures else result


def listings(
    client: httpx.Client, agents: tuple[str, str], samples: int, budget: float
) -> dict[str, Any]:
    """p95 of the filtered listings (and the unfiltered record listing beside them). The written
    agent holds the measured writes at every size, so its page is full at 0 too; the preloaded
    agent holds a tenth of the preloaded memories."""
    written, preloaded = agents
    document = document_id_of(LISTED_DOCUMENT)
    asked: dict[str, tuple[str, dict[str, Any]]] = {
        "memories_by_agent_active": (
            f"/v1/agents/{written}/memories",
            {"status": "active", "limit": 50},
        ),
        "memories_preloaded_agent_active": (
            f"/v1/agents/{preloaded}/memories",
            {"status": "active", "limit": 50},
        ),
        "records_by_type": ("/v1/records", {"type": "invoice", "limit": 50}),
        "records_by_document": ("/v1/records", {"document_id": document, "limit": 50}),
        "records_unfiltered": ("/v1/records", {"limit": 50}),
    }
    found: dict[str, Any] = {}
    for name, (path, params) in asked.items():
        found[name] = timed_gets(client, path, params, samples, budget)
        print(f"[bench] listing {name}: {found[name]}", flush=True)
    return found


async def warm_up(platform: Platform, agent_id: str, seen: dict[str, float]) -> None:
    """Twenty memories through the whole path first: the first store after the memory service
    restarts waits for its consumer group, longer than the gateway keeps an idle connection."""
    gateway = platform.services["gateway"]
    sent = await post_memory_batches(gateway, platform.key, agent_id, sentences(20, 1), 20)
    await wait_stored(sent, seen, 120)


async def measured_writes(
    platform: Platform, meter: Meter, seen: dict[str, float], count: int, window: int, seed: int
) -> dict[str, Any]:
    """Sustained `:batch` writes into a fresh agent, with CPU and database calls per write."""
    with platform.client() as client:
        [agent_id] = create_agents(client, 1)
    await warm_up(platform, agent_id, seen)
    gateway = platform.services["gateway"]
    measured: list[str] = []
    before = meter.snapshot()
    result = await sustained_writes(
        gateway, platform.key, agent_id, sentences(count, seed), seen, BATCH, window, measured
    )
    await asyncio.sleep(1.5)
    result.update(Meter.per_item(before, meter.snapshot(), count))
    result["measured_texts"] = len(measured)
    result["_texts"] = measured
    result["_agent_id"] = agent_id
    return result


def import_rows(count: int) -> list[dict[str, Any]]:
    """The rows a prune removes, imported as shipments."""
    return [{"id": f"p{i}", "lane": f"lane-{i % 17}", "weight": i % 1000} for i in range(count)]


def imported_ids(tenant_id: str, source: str, rows: list[dict[str, Any]]) -> list[str]:
    """The record ids extraction gives these imported rows (its own id rules)."""
    origin = Source(
        tenant_id=tenant_id,
        source_item=f"import:{source}",
        default_type="shipment",
        source_item_id=source,
        forced_type="shipment",
    )
    candidates = [Candidate(f"rows[{i}]", dict(row)) for i, row in enumerate(rows)]
    return [draft.record_id for draft in build(candidates, origin, SchemaRegistry()).drafts]


def prune(
    platform: Platform, tenant_id: str, count: int, seen: dict[str, float], timeout: float
) -> dict[str, Any]:
    """Import `count` records, derive a memory from every tenth, let the platform settle, then
    prune them all and time `POST /v1/prune` to `verified_empty` (or to the timeout)."""
    source = f"growth-prune-{count}"
    rows = import_rows(count)
    ids = imported_ids(tenant_id, source, rows)
    with platform.client(timeout=120) as client:
        client.post(
            "/v1/records:import", json={"source": source, "record_type": "shipment", "rows": rows}
        ).raise_for_status()
        until(lambda: client.get(f"/v1/records/{ids[-1]}").status_code == 200, "records", timeout)
        [agent_id] = create_agents(client, 1)
        answer = client.post(
            f"/v1/agents/{agent_id}/memories:batch",
            json={
                "memories": [
                    {"content": f"note about {rid}", "derived_from": [rid]} for rid in ids[::10]
                ]
            },
        )
        answer.raise_for_status()
        sent = {m["memory_id"]: 0.0 for m in answer.json()["memories"]}
        asyncio.run(wait_stored(sent, seen, timeout))
        asyncio.run(quiet(platform.env["KAFKA_BOOTSTRAP_SERVERS"], platform.prefix, timeout))
        started = time.monotonic()
        job_id = client.post("/v1/prune", json={"record_ids": ids}).json()["prune_job_id"]
        return follow_prune(client, job_id, started, timeout)


def follow_prune(
    client: httpx.Client, job_id: str, started: float, timeout: float
) -> dict[str, Any]:
    """Poll the job until it completes or `timeout` passes; when each service acknowledged."""
    acknowledged: dict[str, float] = {}
    job: dict[str, Any] = {}
    while time.monotonic() - started < timeout:
        job = client.get(f"/v1/prune-jobs/{job_id}").json()
        for service, ack in job["acknowledgements"].items():
            if ack["pending"] or not ack["expected"]:
                acknowledged.pop(service, None)
            elif service not in acknowledged:
                acknowledged[service] = round(time.monotonic() - started, 2)
        if job["status"] == "completed":
            break
        time.sleep(0.2)
    return {
        "counts": job.get("counts"),
        "completed": job.get("status") == "completed",
        "prune_to_verified_seconds": round(time.monotonic() - started, 2),
        "acknowledged_after_seconds": acknowledged,
        "verified_empty": job.get("verified_empty"),
        "verification": job.get("verification"),
    }


async def one_size(size: int, args: argparse.Namespace, pool: Pool, work: Path) -> dict[str, Any]:
    """Everything measured at one size, on a platform of its own."""
    infra = Infra(os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["MONGODB_URI"])
    root = work / f"size-{size}"
    probe = root / "probe"
    probe.mkdir(parents=True)
    prefix = f"g{os.urandom(4).hex()}"
    platform = start_platform(infra, root, **platform_env(args.embedder, prefix, probe))
    seen: dict[str, float] = {}
    ready = asyncio.Event()
    listener = asyncio.create_task(stored_listener(platform.env, seen, ready))
    result: dict[str, Any] = {"size": size}
    try:
        with platform.client() as client:
            agents = create_agents(client, AGENTS)
        tenant_id = tenant_of(platform, agents[0])
        result["preload"] = await preload(platform, tenant_id, agents, size, pool)
        print(f"[bench] {size:,}: preloaded {result['preload']}", flush=True)
        await ready.wait()
        meter = Meter(platform, probe)
        result["writes"] = await measured_writes(
            platform, meter, seen, args.writes, args.window, seed=1000 + size
        )
        print(
            f"[bench] {size:,}: writes {result['writes']['write_throughput_per_s']}/s", flush=True
        )
        questions = sentences(200, seed=99)
        written = [{"key": platform.key, "agent_id": result["writes"]["_agent_id"]}]
        preloaded = [{"key": platform.key, "agent_id": a} for a in agents]
        for name, owners in (("recall", written), ("recall_preloaded", preloaded)):
            recalls = await asyncio.to_thread(
                gateway_recalls, platform.services["gateway"], owners, questions, args.queries
            )
            result[name] = percentiles(recalls)
        print(
            f"[bench] {size:,}: recall {result['recall']}, "
            f"preloaded agents {result['recall_preloaded']}",
            flush=True,
        )
        with platform.client(timeout=120) as client:
            result["listings"] = await asyncio.to_thread(
                listings,
                client,
                (result["writes"]["_agent_id"], agents[0]),
                args.listing_samples,
                args.listing_seconds,
            )
        result["prune"] = await asyncio.to_thread(
            prune, platform, tenant_id, args.prune_records, seen, args.prune_timeout
        )
        print(f"[bench] {size:,}: prune {result['prune']}", flush=True)
    except BaseException:
        for name, process in platform.services.items():
            print(f"[bench] {name} log tail:\n{process.tail(15)}", flush=True)
        raise
    finally:
        listener.cancel()
        stop_platform(platform)
    return result


def ratios(sizes: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets, read off the run: the largest size against the smallest."""
    first, last = sizes[0], sizes[-1]

    def p95(entry: dict[str, Any], name: str) -> float | None:
        found: float | None = entry["listings"][name].get("p95_ms")
        return found

    checks: dict[str, Any] = {
        "compared": [first["size"], last["size"]],
        "write_rate_ratio": round(
            last["writes"]["write_throughput_per_s"] / first["writes"]["write_throughput_per_s"], 3
        ),
        "recall_p95_ratio": round(last["recall"]["p95_ms"] / first["recall"]["p95_ms"], 3),
        "recall_preloaded_p95_ms": [
            first["recall_preloaded"]["p95_ms"],
            last["recall_preloaded"]["p95_ms"],
        ],
    }
    for name in ("memories_by_agent_active", "records_by_type", "records_by_document"):
        low, high = p95(first, name), p95(last, name)
        checks[f"{name}_p95_ms"] = [low, high]
        checks[f"{name}_ratio"] = round(high / low, 2) if low and high else None
    return checks


def plot(results: dict[str, Any], target: Path) -> bool:
    """Writes/s, recall p95 and listing p95 against the stored count; False without
    matplotlib or with fewer than two sizes."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = results["sizes"]
    if len(sizes) < 2:
        return False
    x = [s["size"] for s in sizes]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4))
    axes[0].plot(x, [s["writes"]["write_throughput_per_s"] for s in sizes], "o-", label="writes/s")
    alone = [s["writes"].get("standalone_minilm_per_s") for s in sizes]
    if all(alone):
        axes[0].plot(x, alone, "o--", color="grey", label="MiniLM alone")
    axes[0].set_title("sustained memory writes/s (:batch of 50)")
    axes[1].plot(x, [s["recall"]["p95_ms"] for s in sizes], "o-", label="the written agent")
    axes[1].plot(
        x, [s["recall_preloaded"]["p95_ms"] for s in sizes], "o-", label="preloaded agents"
    )
    axes[1].set_title("recall p95 (ms)")
    for name in sizes[0]["listings"]:
        axes[2].plot(x, [s["listings"][name].get("p95_ms") for s in sizes], "o-", label=name)
    axes[2].axhline(50, color="red", linestyle="--", linewidth=0.8, label="50 ms target")
    axes[2].set_yscale("log")
    axes[2].set_title("listing p95 (ms)")
    for ax in axes:
        ax.set_xticks(x, [f"{size // 1000}k" for size in x])
        ax.set_xlabel("memories and records stored")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    return True


def sizes_of(text: str) -> list[int]:
    """`0,50000,200000` as numbers."""
    return [int(s) for s in text.split(",") if s.strip()]


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Each size in turn, then MiniLM alone on each run's measured texts (same minutes)."""
    pool = await pool_of(args.embedder)
    measured = []
    with tempfile.TemporaryDirectory(prefix="engram-bench-growth-") as tmp:
        for size in sizes_of(args.sizes):
            measured.append(await one_size(size, args, pool, Path(tmp)))
    for entry in measured:
        texts = entry["writes"].pop("_texts")
        entry["writes"].pop("_agent_id")
        if args.embedder == "minilm" and texts:
            entry["writes"]["standalone_minilm_per_s"] = await standalone_rate(texts)
    return measured


def summary_lines(sizes: Iterable[dict[str, Any]]) -> list[str]:
    """One line per size: the figures the issue asks about."""
    lines = []
    for s in sizes:
        listed = {k: v.get("p95_ms") for k, v in s["listings"].items()}
        lines.append(
            f"{s['size']:>7,}: writes {s['writes']['write_throughput_per_s']}/s "
            f"(memory CPU {s['writes']['cpu_ms_per_write'].get('memory')} ms/write, "
            f"db {s['writes']['memory_db_ms_per_write']} ms/write), "
            f"recall p95 {s['recall']['p95_ms']} ms (preloaded agents "
            f"{s['recall_preloaded']['p95_ms']} ms), listings p95 {listed}, "
            f"prune {s['prune']['prune_to_verified_seconds']} s "
            f"(completed {s['prune']['completed']})"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="0,50000,200000", help="memories and records stored")
    parser.add_argument("--writes", type=int, default=3000, help="memories per sustained run")
    parser.add_argument("--window", type=int, default=750, help="most memories in flight")
    parser.add_argument("--queries", type=int, default=100, help="recalls per size")
    parser.add_argument("--listing-samples", type=int, default=40)
    parser.add_argument("--listing-seconds", type=float, default=45.0, help="budget per listing")
    parser.add_argument("--prune-records", type=int, default=1000)
    parser.add_argument("--prune-timeout", type=float, default=300.0)
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    args = parser.parse_args()
    if args.writes < 2 * (args.window + BATCH):
        parser.error("--writes must exceed twice --window (plus a batch) to leave a steady part")
    RESULTS.mkdir(exist_ok=True)
    started = datetime.now(UTC)
    sizes = asyncio.run(run(args))
    results = {
        "started_at": started.isoformat(timespec="seconds"),
        "embedder": args.embedder,
        "machine_cpus": os.cpu_count(),
        "batch_size": BATCH,
        "sizes": sizes,
        "targets": ratios(sizes) if len(sizes) > 1 else None,
    }
    (RESULTS / "growth.json").write_text(json.dumps(results, indent=2, default=str))
    if plot(results, RESULTS / "growth.png"):
        print(f"plot: {RESULTS / 'growth.png'}")
    print("\n".join(summary_lines(sizes)))
    print(json.dumps(results["targets"], indent=2))


if __name__ == "__main__":
    main()
