"""Chaos runs: a seeded workload, a seeded killer, and a tenant-independent snapshot to compare.

The workload is a pure function of the seed (file names, rows, memories, the prune's choice),
so a fault-free run and a run under `kill -9` of the same seed must end in the same state.
The snapshot names everything by what it is (document name and locator, entity, attribute,
value, agent name and content), never by ids that differ per tenant or per run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pymongo import MongoClient

from engram_client import EngramClient, RetryPolicy
from engram_devstack import free_port
from tests.support.platform import GATEWAY_URLS, Platform
from tests.support.polling import until
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant

CITIES = ("Gdansk", "Oslo", "Riga", "Tallinn", "Vilnius", "Helsinki", "Turku", "Malmo", "Aarhus")
NAMES = ("Acme", "Borealis", "Cargo", "Delta", "Eastline", "Fjord", "Gale", "Harbor", "Isle")
TOPICS = ("pallets", "cold chain", "customs", "night shifts", "fuel", "tolls", "ferries", "docks")
CONSUMING = ("ingest", "extraction", "embedding", "memory", "enrichment", "gateway")
"""Services with a Kafka consumer group (the gateway consumes `tombstone.applied`)."""
VICTIMS = (*CONSUMING, "connectors")
SCALABLE = ("ingest", "extraction", "embedding", "gateway")
"""What runs twice in the scale-out case. memory and enrichment hold their vectors in the
embedded Qdrant engine, which one process opens at a time (a second instance on the same
directory gets StoreUnavailable): scaling them out needs QDRANT_URL (a Qdrant server)."""


def patient_client(platform: Platform, key: str) -> EngramClient:
    """A client that keeps retrying (what is safe to retry) while services restart: about two
    and a half minutes of attempts, since a restarted gateway serves only once its consumer has
    rejoined its group, which waited ~20 s for the killed member on a loaded machine."""
    retry = RetryPolicy(max_attempts=300, base_delay=0.2, max_delay=1.0)
    return EngramClient(platform.url, key, timeout=30.0, retry=retry)


# The workload ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    agent: str
    content: str
    type: str = "conversation"
    derived: tuple[tuple[str, str], ...] = ()
    """(document name, entity_id) of records the memory derives from."""
    supersedes: str | None = None
    """The content of an earlier memory of the same agent this one supersedes."""


ROUNDS = 3


@dataclass
class Round:
    """One round: files dropped and uploaded, memories written and recalled in seeded order."""

    drops: dict[str, str]
    uploads: dict[str, str]
    steps: list[tuple[str, Any]]
    derived: list[Memory]
    """Written once the round's records exist (they name them in `derived_from`)."""
    records: int


@dataclass
class Workload:
    """Everything a run does, drawn from one seed."""

    seed: int
    agents: tuple[str, ...]
    rounds: list[Round]
    revisions: dict[str, str]
    last: list[Memory]
    prune: list[tuple[str, str]]
    queries: list[tuple[str, str]]

    @property
    def expected_records(self) -> int:
        return sum(r.records for r in self.rounds)


def _csv(header: str, rows: Iterable[str]) -> str:
    return header + "\n" + "\n".join(rows) + "\n"


def make_workload(seed: int) -> Workload:
    """The same seed gives the same files, rows, memories, order and prune selection."""
    rng = random.Random(seed)
    agents = ("planner", "dispatcher")
    rounds: list[Round] = []
    carriers_of: list[tuple[str, str]] = []
    contested: list[tuple[str, str]] = []
    derived_refs: list[tuple[str, str]] = []
    routes = [
        f"r{i},{rng.choice(CITIES)},{rng.choice(CITIES)},{rng.randint(50, 900)}"
        for i in range(1, rng.randint(8, 11))
    ]
    note = 0
    for r in range(1, ROUNDS + 1):
        ids = [f"c{r}{i:02d}" for i in range(1, rng.randint(7, 9))]
        carriers = [f"carrier,{c},{rng.choice(NAMES)} {c},{rng.choice(CITIES)}" for c in ids]
        depots = [
            f"depot,d{r}{i:02d},{rng.choice(CITIES)},{rng.randint(5, 90)}"
            for i in range(1, rng.randint(4, 6))
        ]
        overlap = sorted(rng.sample(ids, 2))
        fleet = [f"carrier,{c},{rng.choice(CITIES)}" for c in overlap]
        uploads = {f"carriers-{r}.csv": _csv("type,id,name,city", carriers)}
        if r == 1:
            uploads["routes.csv"] = _csv("id,origin,destination,km", routes)
        drops = {
            f"depots-{r}.csv": _csv("type,id,city,docks", depots),
            f"fleet-{r}.csv": _csv("type,id,city", fleet),
        }
        steps: list[tuple[str, Any]] = [("drop", name) for name in drops]
        steps += [("upload", name) for name in uploads]
        for agent in agents:
            for _ in range(rng.randint(2, 3)):
                note += 1
                content = f"{agent} note {note}: {rng.choice(TOPICS)} in {rng.choice(CITIES)}"
                kind = rng.choice(("conversation", "observation"))
                steps.append(("memory", Memory(agent, content, kind)))
        steps.append(("recall", (rng.choice(agents), f"where are the {rng.choice(TOPICS)}")))
        rng.shuffle(steps)
        refs = [(f"carriers-{r}.csv", f"carrier:{c}") for c in ids]
        refs += [(f"depots-{r}.csv", f"depot:{row.split(',')[1]}") for row in depots]
        derived = [
            Memory(agent, f"{agent} learned {ref[1]} from {ref[0]}", derived=(ref,))
            for agent, ref in zip(agents, rng.sample(refs, 2), strict=True)
        ]
        derived_refs += [m.derived[0] for m in derived]
        carriers_of += [(f"carriers-{r}.csv", f"carrier:{c}") for c in ids]
        contested.append((f"carriers-{r}.csv", f"carrier:{overlap[0]}"))
        records = len(carriers) + len(depots) + len(fleet) + (len(routes) if r == 1 else 0)
        rounds.append(Round(drops, uploads, steps, derived, records))
    # A second version of routes.csv: one row gone (tombstoned), one row changed (new revision).
    changed = list(routes[1:])
    rid, origin, destination, _ = changed[0].split(",")
    changed[0] = f"{rid},{origin},{destination},{rng.randint(901, 999)}"
    revisions = {"routes.csv": _csv("id,origin,destination,km", changed)}
    first = next(m for _, m in rounds[0].steps if isinstance(m, Memory) and m.agent == "planner")
    last = [Memory("planner", "planner revised its first note", supersedes=first.content)]
    # Three carrier records: one a memory's source (its memory is withdrawn), one contested by
    # a fleet file (its contradiction loses a claim), one at random.
    prune = list(
        dict.fromkeys([*(r for r in derived_refs if r in carriers_of)][:1] + contested[:1])
    )
    prune += rng.sample([r for r in carriers_of if r not in prune], 3 - len(prune))
    queries = [(rng.choice(agents), f"what about {rng.choice(TOPICS)}") for _ in range(2)]
    return Workload(seed, agents, rounds, revisions, last, prune, queries)


@dataclass
class RunResult:
    prune_jobs: list[dict[str, Any]]
    seconds: float


def tenant_of(platform: Platform, key: str) -> str:
    """The tenant a key belongs to, from the gateway's own database (keys are `egk_<id>_...`)."""
    key_id = key.split("_")[1]
    with MongoClient[dict[str, Any]](platform.env["MONGODB_URI"]) as mongo:
        row = mongo[f"{platform.env['ENGRAM_DATABASE_PREFIX']}gateway"]["api_keys"].find_one(
            {"_id": key_id}
        )
    assert row is not None, "the new key is in the gateway's database"
    return str(row["tenant_id"])


def drop_file(folder: Path, name: str, text: str) -> None:
    """Write through a temporary name, then rename: the watcher never sees a partial file."""
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{name}.part"
    partial.write_text(text)
    partial.rename(folder / name)


def record_ids_by_ref(client: EngramClient) -> dict[tuple[str, str], str]:
    """(document name, entity_id) → record id for the tenant's records."""
    names: dict[str, str] = {}
    found = {}
    for record in client.iter_records(page_size=500):
        doc_id = record.lineage.document_id if record.lineage else None
        if doc_id and doc_id not in names:
            names[doc_id] = client.get_document(doc_id).name or doc_id
        found[(names.get(doc_id or "", ""), record.entity_id or "")] = record.record_id
    return found


def run_workload(
    platform: Platform, workload: Workload, gateway_lock: threading.Lock
) -> tuple[EngramClient, RunResult]:
    """Run the workload for a fresh tenant; returns its client and the prune jobs it started."""
    started = time.monotonic()
    key = create_tenant(platform.env, f"chaos-{workload.seed}")
    tenant = tenant_of(platform, key)
    client = patient_client(platform, key)
    inbox = platform.drop_root / tenant
    with gateway_lock:  # creating an agent is not retry-safe: no gateway kill meanwhile
        agents = {name: client.create_agent(name).agent_id for name in workload.agents}
    memory_ids: dict[tuple[str, str], str] = {}

    def remember(memory: Memory, refs: dict[tuple[str, str], str] | None = None) -> None:
        derived = [refs[ref] for ref in memory.derived] if refs else None
        supersedes = memory_ids[(memory.agent, memory.supersedes)] if memory.supersedes else None
        accepted = client.write_memory(
            agents[memory.agent],
            memory.content,
            type=memory.type,
            derived_from=derived,
            supersedes=supersedes,
        )
        memory_ids[(memory.agent, memory.content)] = accepted.memory_id

    expected = 0
    refs: dict[tuple[str, str], str] = {}
    for round_ in workload.rounds:
        documents: dict[str, str] = {}
        for kind, item in round_.steps:
            if kind == "drop":
                drop_file(inbox, item, round_.drops[item])
            elif kind == "upload":
                text = round_.uploads[item]
                documents[item] = client.upload_document(item, text, mime="text/csv").document_id
            elif kind == "memory":
                remember(item)
            elif kind == "recall":
                agent, query = item
                client.recall(agents[agent], query, top_k=10, min_score=-1.0)
        for doc_id in documents.values():
            assert client.wait_for_document(doc_id, timeout=300).status == "extracted"
        expected += round_.records

        def enough(found: dict[tuple[str, str], str], n: int = expected) -> bool:
            return len(found) >= max(n, 1)

        refs = until(
            lambda: record_ids_by_ref(client), f"{expected} records extracted", 300, ready=enough
        )
        for memory in round_.derived:
            remember(memory, refs)
    for name, text in workload.revisions.items():
        doc_id = client.upload_document(name, text, mime="text/csv").document_id

        def revised(doc_id: str = doc_id) -> bool:
            doc = client.get_document(doc_id)
            return (
                doc.status == "extracted"
                and len(doc.versions) >= 2
                and all(v.status == "extracted" for v in doc.versions)
            )

        until(revised, f"{name} revised", 300)
    for memory in workload.last:
        remember(memory)
    for (agent, _), memory_id in memory_ids.items():
        client.wait_for_memory(agents[agent], memory_id, timeout=300)
    with gateway_lock:  # starting a prune is not retry-safe: no gateway kill while it is sent
        job_id = client.start_prune(record_ids=[refs[ref] for ref in workload.prune]).prune_job_id
    job = client.wait_for_prune_job(job_id, timeout=300)
    for agent, query in workload.queries:
        client.recall(agents[agent], query, top_k=10, min_score=-1.0)
    return client, RunResult([job.model_dump(mode="json")], time.monotonic() - started)


# The snapshot ---------------------------------------------------------------------------------


def _value(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def snapshot(client: EngramClient, agents: Iterable[str]) -> dict[str, Any]:
    """The tenant's final state, keyed by content and names; duplicates are counted, not merged."""
    names: dict[str, str] = {}
    ref_of: dict[str, tuple[str, str, str]] = {}
    records: Counter[tuple[Any, ...]] = Counter()
    for record in client.iter_records(page_size=500):
        lineage = record.lineage
        doc_id = lineage.document_id if lineage else None
        if doc_id and doc_id not in names:
            names[doc_id] = client.get_document(doc_id).name or doc_id
        ref = (names.get(doc_id or "", ""), lineage.locator if lineage else "", record.entity_id)
        ref_of[record.record_id] = ref  # type: ignore[assignment]
        records[
            (*ref, record.record_type, record.status, record.revision, record.content_sha256)
        ] += 1

    def refs(ids: Iterable[str | None] | None) -> tuple[Any, ...]:
        return tuple(sorted(ref_of.get(i or "", ("?", i or "", "")) for i in ids or ()))

    facts: Counter[tuple[Any, ...]] = Counter()
    entity_ids = sorted(e["entity_id"] for e in client.iter_entities(page_size=200))
    for entity_id in entity_ids:
        entity = client.get_entity(entity_id, include_withdrawn=True)
        for fact in entity.facts:
            support = refs(s.get("record_id") for s in fact.support)
            facts[(entity_id, fact.attribute, _value(fact.value), fact.status, support)] += 1
    contradictions = Counter(
        (c.entity_id, c.attribute, c.status) for c in client.list_contradictions(limit=1000)
    )
    memories: Counter[tuple[Any, ...]] = Counter()
    memory_vectors: Counter[tuple[str, str]] = Counter()
    by_agent = {a.name: a.agent_id for a in client.list_agents() if a.name in set(agents)}
    for name, agent_id in sorted(by_agent.items()):
        rows = list(client.iter_memories(agent_id, page_size=500))
        sha_of = {m.memory_id: (m.model_extra or {}).get("content_sha256") for m in rows}
        for m in rows:
            derived = refs(m.derived_from)
            supersedes = sha_of.get(m.supersedes or "", m.supersedes)
            reason = (m.model_extra or {}).get("withdrawn_reason")
            key = (name, sha_of[m.memory_id], m.type, m.status, derived, supersedes, reason)
            memories[key] += 1
        recalled = client.recall(
            agent_id,
            "carriers depots routes notes",
            top_k=100,
            min_score=-1.0,
            include_statuses=["active", "superseded"],
        )
        for hit in recalled.results:
            memory_vectors[(name, hit.content or "")] += 1
    knowledge_vectors: Counter[tuple[Any, ...]] = Counter()
    for known in client.search_knowledge(
        "carrier depot route city", top_k=1000, min_score=-1.0
    ).results:
        extra = known.model_extra or {}
        if extra.get("kind") == "article_section":
            fresh = extra.get("text_sha256") == extra.get("embedded_text_sha256")
            knowledge_vectors[("section", known.entity_id, known.attribute, fresh)] += 1
        else:
            knowledge_vectors[("fact", known.entity_id, known.attribute, _value(known.value))] += 1
    documents = Counter(
        (name, client.get_document(doc_id).status) for doc_id, name in names.items()
    )
    return {
        "documents": documents,
        "records": records,
        "facts": facts,
        "contradictions": contradictions,
        "memories": memories,
        "memory_vectors": memory_vectors,
        "knowledge_vectors": knowledge_vectors,
    }


def duplicates(snap: dict[str, Any]) -> dict[str, list[Any]]:
    """Anything that appears twice: a record/fact/memory/vector with two rows."""
    found = {kind: [k for k, n in rows.items() if n > 1] for kind, rows in snap.items()}
    # The same logical item under two statuses or revisions is a duplicate too.
    logical = {
        "records": Counter(k[:3] for k in snap["records"]),
        "facts": Counter(k[:3] for k in snap["facts"]),
        "memories": Counter(k[:2] for k in snap["memories"]),
    }
    for kind, counts in logical.items():
        found[kind] += [k for k, n in counts.items() if n > 1]
    return {kind: keys for kind, keys in found.items() if keys}


def summary(snap: dict[str, Any]) -> dict[str, int]:
    """Counts per kind, with statuses where they matter."""
    out = {kind: sum(rows.values()) for kind, rows in snap.items()}
    for kind, status_at in (("records", 4), ("facts", 3), ("memories", 3)):
        for status, n in Counter(k[status_at] for k in snap[kind].elements()).items():
            out[f"{kind}.{status}"] = n
    return out


def difference(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """What one snapshot has that the other lacks, per kind."""
    diff = {}
    for kind in a.keys() | b.keys():
        only_a = a.get(kind, Counter()) - b.get(kind, Counter())
        only_b = b.get(kind, Counter()) - a.get(kind, Counter())
        if only_a or only_b:
            diff[kind] = {
                "baseline_only": sorted(only_a, key=str),
                "chaos_only": sorted(only_b, key=str),
            }
    return diff


# Quiescence ---------------------------------------------------------------------------------


def quiet(platform: Platform) -> bool:
    """Every consumer group caught up with every partition it committed, every outbox empty."""
    prefix = platform.prefix
    with MongoClient[dict[str, Any]](platform.env["MONGODB_URI"]) as mongo:
        for service in CONSUMING:
            db = mongo[f"{platform.env['ENGRAM_DATABASE_PREFIX']}{service}"]
            if db["outbox"].count_documents({}):
                return False
    return asyncio.run(_lag_zero(platform.env["KAFKA_BOOTSTRAP_SERVERS"], prefix))


async def _lag_zero(bootstrap: str, prefix: str) -> bool:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await admin.start()
    await consumer.start()
    try:
        for service in CONSUMING:
            committed = await admin.list_consumer_group_offsets(f"{prefix}engram-{service}")
            wanted = [tp for tp in committed if tp.topic.startswith(prefix)]
            if not wanted:
                return False
            ends = await consumer.end_offsets(wanted)
            if any(committed[tp].offset < ends[tp] for tp in wanted):
                return False
        return True
    finally:
        await consumer.stop()
        await admin.close()


def partition_offsets(platform: Platform) -> dict[str, dict[int, int]]:
    """Per consumer group, committed offsets summed per partition number across its topics.

    The difference over a run is how the group's messages split across partitions, and so
    across instances: metric points carry only the service name, not which instance.
    """
    return asyncio.run(_partition_offsets(platform.env["KAFKA_BOOTSTRAP_SERVERS"], platform.prefix))


async def _partition_offsets(bootstrap: str, prefix: str) -> dict[str, dict[int, int]]:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        out: dict[str, dict[int, int]] = {}
        for service in CONSUMING:
            committed = await admin.list_consumer_group_offsets(f"{prefix}engram-{service}")
            per: dict[int, int] = {}
            for tp, meta in committed.items():
                if tp.topic.startswith(prefix) and meta.offset >= 0:
                    per[tp.partition] = per.get(tp.partition, 0) + meta.offset
            out[service] = per
        return out
    finally:
        await admin.close()


def applied_counts(platform: Platform) -> dict[str, int]:
    """Events each service's consumers applied so far (the dedup ledger, one row per event)."""
    with MongoClient[dict[str, Any]](platform.env["MONGODB_URI"]) as mongo:
        return {
            service: mongo[f"{platform.env['ENGRAM_DATABASE_PREFIX']}{service}"][
                "applied_events"
            ].count_documents({})
            for service in CONSUMING
        }


# The killer ---------------------------------------------------------------------------------


@dataclass
class Kill:
    at: float
    victim: str


class ChaosMonkey(threading.Thread):
    """Every few seconds (seeded), SIGKILL one seeded-random service instance and restart it.

    The next kill does not wait for the last victim to be ready: a service may be killed again
    while it recovers, and two may be down at once. It keeps going until stopped, and at least
    until `min_kills` kills happened.
    """

    def __init__(
        self,
        platform: Platform,
        seed: int,
        gateway_lock: threading.Lock,
        *,
        pause: tuple[float, float] = (3.5, 6.5),
        min_kills: int = 8,
    ) -> None:
        super().__init__(name="chaos-monkey", daemon=True)
        self.platform = platform
        self.rng = random.Random(seed ^ 0x5EED)
        self.gateway_lock = gateway_lock
        self.victims = sorted(n for n in platform.services if n.split("#")[0] in VICTIMS)
        self.pause = pause
        self.min_kills = min_kills
        self.kills: list[Kill] = []
        self.error: BaseException | None = None
        self._halt = threading.Event()
        self._began = time.monotonic()

    def run(self) -> None:
        try:
            while True:
                time.sleep(self.rng.uniform(*self.pause))
                if self._halt.is_set() and len(self.kills) >= self.min_kills:
                    return
                victim = self.rng.choice(self.victims)
                proc = self.platform.services[victim]
                at = round(time.monotonic() - self._began, 1)
                with self.gateway_lock if victim.startswith("gateway") else _NO_LOCK:
                    proc.kill9()
                    proc.start(wait=False)
                self.kills.append(Kill(at, victim))
                print(f"[chaos] t={at:6.1f}s kill -9 {victim}, restarted", flush=True)
        except BaseException as exc:  # reported by stop(); the test fails with it
            self.error = exc

    def stop(self) -> list[Kill]:
        """Stop after the minimum number of kills, then wait until every instance is ready."""
        self._halt.set()
        self.join(300)
        if self.error is not None:
            raise self.error
        for proc in self.platform.services.values():
            proc.wait_ready(180)
        return self.kills


_NO_LOCK = contextlib.nullcontext()


# Scale-out ----------------------------------------------------------------------------------


def add_instances(
    platform: Platform, services: Iterable[str], root: Path, copies: int = 1, wait: bool = True
) -> list[ServiceProcess]:
    """`copies` more instances of each named service (`<name>#2`, `#3`...): same env (so the
    same consumer group), own port and log directory; started, and ready unless `wait` is
    False."""
    added = []
    for name in services:
        first = platform.services[name]
        env = dict(first.env)
        if name == "gateway":
            env.update({var: platform.services[s].url for s, var in GATEWAY_URLS.items()})
        for number in range(2, copies + 2):
            another = ServiceProcess(name, env, free_port(), root / f"logs-{number}")
            platform.services[f"{name}#{number}"] = another
            added.append(another)
    for proc in added:
        proc.start(wait=False)
    for proc in added if wait else []:
        proc.wait_ready(120)
    return added
