"""Where a single write's wait goes, hop by hop: when each of its interactive-lane events
arrives on Kafka, read by a consumer of the bench's own beside the platform."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

HOPS = ("memory.write_requested", "embedding.requested", "embedding.computed")
"""The interactive lane's events before `memory.stored`, whose arrival splits a write's wait."""
NAMES = ("gateway", "memory_write", "embedding", "memory_store")
"""The hops: the gateway (POST to `memory.write_requested`), memory's first pass, embedding, and
memory's second pass (to `memory.stored`)."""
ONE_PASS = "memory_one_pass"
"""A write memory embedded and stored in its first pass (no embedding request on Kafka): from
`memory.write_requested` to recallable."""
Arrivals = dict[tuple[str, str], float]


async def listen(
    env: dict[str, str],
    topics: tuple[str, ...],
    note: Callable[[Any, float], None],
    ready: asyncio.Event,
) -> None:
    """Read the platform's `topics` from their start, beside it, and hand `note` each record
    with the time its fetch arrived; `ready` once subscribed."""
    from aiokafka import AIOKafkaConsumer

    prefix = env["ENGRAM_TOPIC_PREFIX"]
    consumer = AIOKafkaConsumer(
        *(f"{prefix}{topic}" for topic in topics),
        bootstrap_servers=env["KAFKA_BOOTSTRAP_SERVERS"],
        auto_offset_reset="earliest",
    )
    await consumer.start()
    ready.set()
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=100)
            now = time.perf_counter()
            for records in batch.values():
                for record in records:
                    note(record, now)
    finally:
        await consumer.stop()


async def hops_listener(env: dict[str, str], arrivals: Arrivals, ready: asyncio.Event) -> None:
    """When each interactive-lane event arrives (keyed by event type and memory id; a bulk
    load's events travel the bulk lane's topics, so this reads only single writes')."""

    def note(record: Any, now: float) -> None:
        kind = dict(record.headers).get("event_type", b"").decode()
        if kind in HOPS:
            payload = json.loads(record.value)["payload"]
            memory_id = payload.get("memory_id") or payload.get("request_id")
            arrivals.setdefault((kind, str(memory_id)), now)

    await listen(env, ("engram.memories.v1", "engram.embeddings.v1"), note, ready)


def hop_times(
    sent: dict[str, float], seen: dict[str, float], arrivals: Arrivals
) -> dict[str, list[float]]:
    """Each hop's seconds for every write seen at every mark (`NAMES`, in order)."""
    spans: dict[str, list[float]] = {name: [] for name in (*NAMES, ONE_PASS)}
    for memory_id, posted in sent.items():
        marks = [posted, *(arrivals.get((kind, memory_id)) for kind in HOPS), seen.get(memory_id)]
        if marks[1] is not None and marks[2] is None and marks[3] is None and marks[4]:
            spans[NAMES[0]].append(marks[1] - posted)
            spans[ONE_PASS].append(marks[4] - marks[1])
            continue
        if any(mark is None for mark in marks):
            continue
        times = [float(mark) for mark in marks if mark is not None]
        for name, start, end in zip(NAMES, times, times[1:], strict=False):
            spans[name].append(end - start)
    return {name: values for name, values in spans.items() if values}
