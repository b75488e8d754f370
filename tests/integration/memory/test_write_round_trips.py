"""Database round trips of the memory write path, counted per consumer batch on the real server:
both passes (write requested, then embedding computed), and a single write's one pass (embedded
in memory's process), with the platform's own calls (applied marks, outbox staging, the relay),
so a change that adds a call per batch or per memory fails."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pymongo import monitoring

from engram_embedding.handlers import EmbeddingHandlers
from engram_embedding.service.requests import EmbeddingRequests
from engram_events import Envelope, decode, encode, new_event
from engram_events.catalog import EMBEDDING_COMPUTED, MEMORY_WRITE_REQUESTED
from engram_events.content import ContentLimits
from engram_events.payloads.memories import MemoryWriteRequested
from engram_memory.adapters.dedup import DedupSlots
from engram_memory.adapters.retention import RetentionRules
from engram_memory.adapters.rows import MemoryRows
from engram_memory.adapters.vectors import MemoryVectors
from engram_memory.handlers import MemoryHandlers
from engram_memory.service.cascades import Cascades
from engram_memory.service.dedup import Dedup
from engram_memory.service.inline import InlineEmbedding
from engram_memory.service.retention import Retention
from engram_memory.service.storing import Storing
from engram_memory.service.withdrawal import Withdrawals
from engram_memory.service.writes import Writes
from engram_platform.consuming import Consumer
from engram_platform.mongo import connect_mongo
from engram_platform.outbox import Outbox, OutboxRelay
from engram_platform.tracing_mongo import UNTRACED_COMMANDS, command_collection
from engram_vectors import ExactNumpyStore
from tests.conftest import Infra
from tests.unit.memory.fakes import CountingEmbedder

TENANT = "ten_rt"


class Commands(monitoring.CommandListener):
    """Every command the client sends, as `name collection`, in order."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.lock = threading.Lock()

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name.lower() in UNTRACED_COMMANDS:
            return
        collection = command_collection(event.command_name, event.command)
        with self.lock:
            self.seen.append(f"{event.command_name} {collection}")

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        return None

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        return None

    def take(self) -> list[str]:
        with self.lock:
            taken, self.seen = self.seen, []
        return taken


@dataclass
class Sender:
    """What the relay would send to Kafka, kept."""

    sent: list[dict[str, Any]] = field(default_factory=list)

    async def send(self, entries: list[dict[str, Any]]) -> None:
        self.sent.extend(entries)


@dataclass
class Broker:
    sender: Sender = field(default_factory=Sender)


@dataclass
class Record:
    value: bytes
    topic: str
    partition: int = 0
    offset: int = 0
    key: bytes = b"agt_rt"
    headers: tuple[Any, ...] = ()


class WritePath:
    """The memory service's write handlers behind a real consumer, outbox and relay."""

    def __init__(self, db: Any, *, inline: bool = False) -> None:
        self.sender = Sender()
        self.outbox = Outbox(db)
        broker: Any = Broker(self.sender)
        self.consumer = Consumer(
            service="memory",
            broker=broker,
            db=db,
            outbox=self.outbox,
            parked_poll_seconds=600,  # the retrier's idle poll is per second, not per batch
        )
        sender: Any = self.sender
        self.relay = OutboxRelay(self.outbox, sender, service="memory")
        rows = MemoryRows(db, source_index=True)
        self.embedder = CountingEmbedder()
        self.vectors = MemoryVectors(ExactNumpyStore(), "memories")
        self.embedding = EmbeddingHandlers(EmbeddingRequests(self.embedder, batch_size=64))
        rules = RetentionRules(db)
        withdrawals = Withdrawals(rows, self.vectors)
        writes = Writes(rows, Dedup(DedupSlots(db), rows), ContentLimits())
        storing = Storing(rows, self.vectors, Retention([], rows, withdrawals, rules))
        embedder = self.embedder
        handlers = MemoryHandlers(
            writes,
            storing,
            Cascades(rows, withdrawals, rules),
            InlineEmbedding(writes, storing, lambda: embedder) if inline else None,
        )
        self.consumer.on(
            MEMORY_WRITE_REQUESTED,
            handlers.on_single_write,
            batch=handlers.on_single_writes,
            on_dead_letter=handlers.on_write_dead_lettered,
        )
        self.consumer.on(
            EMBEDDING_COMPUTED,
            handlers.on_computed,
            batch=handlers.on_computed_many,
            on_dead_letter=handlers.on_computed_dead_lettered,
        )
        self.offset = 0

    async def open(self) -> None:
        p = self.embedder.provenance
        await self.vectors.open(p.dimension, p.fingerprint)
        await self.consumer.start()

    def records(self, events: list[Envelope[Any]], topic: str) -> list[Record]:
        made = []
        for event in events:
            self.offset += 1
            made.append(Record(encode(event), topic, offset=self.offset))
        return made

    async def relay_pass(self) -> list[Envelope[Any]]:
        """One relay pass; returns what it sent (decoded)."""
        self.sender.sent.clear()
        await self.relay.publish_pending()
        return [decode(e["value"]) for e in self.sender.sent]


def writes(n: int, tag: str) -> list[Envelope[Any]]:
    return [
        new_event(
            MEMORY_WRITE_REQUESTED,
            MemoryWriteRequested(
                memory_id=f"mem_{tag}_{k}", agent_id="agt_rt", content=f"fact {tag} number {k}"
            ),
            tenant_id=TENANT,
        )
        for k in range(n)
    ]


@pytest.fixture
async def counted(infra: Infra) -> AsyncIterator[tuple[Any, Commands]]:
    commands = Commands()
    client = connect_mongo(infra.mongodb_uri, app_name="round-trips", event_listeners=[commands])
    db = client[f"t_{uuid.uuid4().hex[:12]}"]
    yield db, commands
    await client.drop_database(db.name)
    client.close()


WRITE_PASS = {
    "find applied_events": 1,  # the inputs already applied (a replay)
    "insert memory_dedup": 1,  # the content's slots, claimed without a read first
    "insert memories": 1,  # the rows, pending
    "insert outbox": 1,  # the embedding requests, one parcel
    "insert applied_events": 1,  # the inputs, marked applied
}
COMPUTED_PASS = {
    "find applied_events": 1,
    "find memories": 1,  # the rows the vectors are for (still pending?)
    "update memories": 1,  # active, with provenance, one update for the batch
    "insert outbox": 1,  # memory.stored
    "insert applied_events": 1,
}
ONE_PASS = {
    "find applied_events": 1,
    "insert memory_dedup": 1,
    "insert memories": 1,  # handed back as a read would, so the store reads nothing
    "update memories": 1,
    "insert outbox": 1,  # memory.stored
    "insert applied_events": 1,
}
RULES_READ = "find memory_retention"
"""An agent's own retention rules, read once per `RULES_CACHE_SECONDS`."""


async def one_pass(
    path: WritePath, commands: Commands, n: int, tag: str
) -> dict[str, Counter[str]]:
    """A batch of `n` new writes through both passes, each followed by a relay pass."""
    commands.take()
    await path.consumer.process_batch(path.records(writes(n, tag), "engram.memories.v1"))
    first = commands.take()
    requested = await path.relay_pass()
    relayed = commands.take()
    computed: list[Envelope[Any]] = []
    for event in requested:
        if event.event_type == "embedding.requested":
            computed += await path.embedding.on_requested(event)
    assert len(computed) == n
    await path.consumer.process_batch(path.records(computed, "engram.embeddings.v1"))
    second = commands.take()
    stored = await path.relay_pass()
    relayed += commands.take()
    assert [e.event_type for e in stored] == ["memory.stored"] * n
    return {"write": Counter(first), "computed": Counter(second), "relay": Counter(relayed)}


@pytest.mark.parametrize("n", [1, 50])
async def test_a_batch_of_new_writes_costs_five_calls_a_pass(
    counted: tuple[Any, Commands], n: int
) -> None:
    db, commands = counted
    path = WritePath(db)
    await path.open()
    await path.relay_pass()
    await asyncio.sleep(0.1)
    try:
        await count_passes(path, db, commands, n)
    finally:
        await path.consumer.stop()


async def count_passes(path: WritePath, db: Any, commands: Commands, n: int) -> None:
    for tag in ("a", "b"):
        got = await one_pass(path, commands, n, tag)
        assert got["write"] == Counter(WRITE_PASS), tag
        rules = got["computed"].pop(RULES_READ, 0)
        assert got["computed"] == Counter(COMPUTED_PASS), tag
        assert rules <= 1, "the rules are read once, then cached"
        assert set(got["relay"]) <= {"delete outbox"}, "the relay sends from memory"
        assert got["relay"]["delete outbox"] <= 1, "sent parcels are deleted together"
    await path.relay.forget_sent(now=True)
    assert await db["outbox"].count_documents({}) == 0


@pytest.mark.parametrize("n", [1, 50])
async def test_a_batch_of_single_writes_in_one_pass_costs_six_calls(
    counted: tuple[Any, Commands], n: int
) -> None:
    db, commands = counted
    path = WritePath(db, inline=True)
    await path.open()
    await path.relay_pass()
    await asyncio.sleep(0.1)
    try:
        for tag in ("a", "b"):
            commands.take()
            await path.consumer.process_batch(path.records(writes(n, tag), "engram.memories.v1"))
            got = Counter(commands.take())
            stored = await path.relay_pass()
            relayed = Counter(commands.take())
            assert [e.event_type for e in stored] == ["memory.stored"] * n, tag
            rules = got.pop(RULES_READ, 0)
            assert got == Counter(ONE_PASS), tag
            assert rules <= 1, "the rules are read once, then cached"
            assert set(relayed) <= {"delete outbox"}, "the relay sends from memory"
    finally:
        await path.consumer.stop()
