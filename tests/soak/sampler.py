"""What the soak watches while the load runs: RSS per process, lag per consumer group, DLQ size."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from engram_devstack.processes import rss_mb
from engram_events.topics import Topics
from tests.support.chaos import CONSUMING
from tests.support.platform import Platform


@dataclass
class Sample:
    """One reading of every process and consumer group."""

    at: float
    rss_mib: dict[str, float]
    lag: dict[str, int]
    dlq: int


@dataclass
class Sampler:
    """Reads RSS, lag and DLQ size every `every` seconds until cancelled."""

    platform: Platform
    servers: dict[str, int | None]
    every: float = 5.0
    samples: list[Sample] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def pids(self) -> dict[str, int]:
        """Each service's process (the first instance) and the servers when they are ours."""
        found = {
            name: proc.proc.pid
            for name, proc in self.platform.services.items()
            if proc.proc is not None and proc.proc.poll() is None
        }
        found.update({name: pid for name, pid in self.servers.items() if pid})
        return found

    async def run(self) -> None:
        """Sample until cancelled."""
        from aiokafka import AIOKafkaConsumer
        from aiokafka.admin import AIOKafkaAdminClient

        bootstrap = self.platform.env["KAFKA_BOOTSTRAP_SERVERS"]
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        await admin.start()
        await consumer.start()
        self.started = time.monotonic()
        try:
            while True:
                await self.sample(admin, consumer)
                await asyncio.sleep(self.every)
        finally:
            await consumer.stop()
            await admin.close()

    async def sample(self, admin: Any, consumer: Any) -> None:
        """One reading; a group that has not committed yet reads as lag 0."""
        rss = {name: r for name, pid in self.pids().items() if (r := rss_mb(pid)) is not None}
        lag: dict[str, int] = {}
        prefix = self.platform.prefix
        for service in CONSUMING:
            committed = await admin.list_consumer_group_offsets(f"{prefix}engram-{service}")
            wanted = [tp for tp in committed if tp.topic.startswith(prefix)]
            ends = await consumer.end_offsets(wanted) if wanted else {}
            lag[service] = sum(max(0, ends[tp] - committed[tp].offset) for tp in wanted)
        dlq = await _topic_size(admin, consumer, f"{prefix}{Topics.DLQ.value}")
        self.samples.append(Sample(time.monotonic() - self.started, rss, lag, dlq))

    async def drained(self, timeout: float) -> bool:
        """Wait until a sample shows no lag in any group (True), or give up after `timeout`."""
        deadline = time.monotonic() + timeout
        seen = len(self.samples)
        while time.monotonic() < deadline:
            await asyncio.sleep(self.every)
            fresh = self.samples[seen:]
            if fresh and all(v == 0 for v in fresh[-1].lag.values()):
                return True
        return False


async def _topic_size(admin: Any, consumer: Any, topic: str) -> int:
    """Messages ever written to a topic (0 when it does not exist yet)."""
    from aiokafka import TopicPartition

    described = await admin.describe_topics([topic])
    partitions = [p["partition"] for d in described if not d["error_code"] for p in d["partitions"]]
    if not partitions:
        return 0
    ends = await consumer.end_offsets([TopicPartition(topic, p) for p in partitions])
    return int(sum(ends.values()))
