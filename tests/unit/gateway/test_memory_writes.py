"""A memory write a live memory (or an earlier write of the batch) holds is not queued again;
when the memory service cannot be asked, the write is queued anyway."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.payloads.memories import MemoryWriteRequested
from engram_gateway.domain.submissions import Submission
from engram_gateway.service.intake import Intake
from engram_gateway.service.memory_writes import MemoryWrites, Outcome
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

T = "tnt_a"


class Owners:
    """The memory service's duplicate lookup: answers `found` as given, or fails."""

    def __init__(self, found: list[dict[str, Any] | None] | None) -> None:
        self.found = found
        self.asked: list[dict[str, Any]] = []

    async def read_post(
        self, service: str, path: str, body: bytes, *, tenant_id: str
    ) -> tuple[int, bytes]:
        assert service == "memory" and path.endswith("/memories/duplicates")
        self.asked.append(json.loads(body))
        if self.found is None:
            raise Problem(503, "service-unavailable", "the memory service is not answering")
        return 200, json.dumps({"found": self.found}).encode()


class Sink:
    def __init__(self) -> None:
        self.published: list[str] = []

    async def publish(self, event: Envelope[Any]) -> None:
        self.published.append(event.payload.memory_id)

    async def publish_many(self, events: Sequence[Envelope[Any]]) -> None:
        self.published.extend(e.payload.memory_id for e in events)


class Log:
    def __init__(self) -> None:
        self.noted: list[str] = []

    async def record(
        self, tenant_id: str, kind: str, item_id: str, **fields: Any
    ) -> Submission | None:
        self.noted.append(item_id)
        return None

    async def record_many(
        self, tenant_id: str, kind: str, items: list[tuple[str, dict[str, Any]]]
    ) -> int:
        self.noted.extend(item_id for item_id, _ in items)
        return len(items)

    async def get(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        return None

    async def release(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        return None


def _write(memory_id: str, content: str, **fields: Any) -> Envelope[MemoryWriteRequested]:
    payload = MemoryWriteRequested(memory_id=memory_id, agent_id="agt_1", content=content, **fields)
    return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id=T)


def _writes(owners: Owners) -> tuple[MemoryWrites, Sink, Log]:
    sink, log = Sink(), Log()
    return MemoryWrites(owners, Intake(sink, log)), sink, log


async def test_a_write_a_live_memory_holds_is_answered_by_it_and_not_queued() -> None:
    writes, sink, log = _writes(Owners([{"memory_id": "mem_old", "status": "active"}]))
    outcome = await writes.write(_write("mem_new", "tea at five"))
    assert outcome == Outcome("mem_old", "active", deduplicated=True)
    assert sink.published == [] and log.noted == []


async def test_a_batch_queues_once_what_two_of_its_writes_say() -> None:
    owners = Owners([None, None])
    writes, sink, log = _writes(owners)
    batch = [
        _write("mem_1", "tea at five"),
        _write("mem_2", "Tea at five "),
        _write("mem_3", "tea at five", allow_duplicate=True),
    ]
    outcomes = await writes.write_batch(T, "agt_1", batch)
    assert outcomes == [
        Outcome("mem_1", "pending", deduplicated=False),
        Outcome("mem_1", "pending", deduplicated=True),
        Outcome("mem_3", "pending", deduplicated=False),
    ]
    assert sink.published == ["mem_1", "mem_3"] and log.noted == ["mem_1", "mem_3"]
    assert len(owners.asked[0]["items"]) == 2, "a write allowing duplicates is not looked up"


async def test_without_the_memory_service_the_write_is_queued_anyway() -> None:
    writes, sink, log = _writes(Owners(None))
    outcome = await writes.write(_write("mem_1", "tea at five"))
    assert outcome == Outcome("mem_1", "pending", deduplicated=False)
    assert sink.published == ["mem_1"] and log.noted == ["mem_1"]


class HeldOwners(Owners):
    """Lookups held until released; holds a memory saying "tea at five" for each agent."""

    def __init__(self) -> None:
        super().__init__([])
        self.release = asyncio.Event()
        self.paths: list[str] = []

    async def read_post(
        self, service: str, path: str, body: bytes, *, tenant_id: str
    ) -> tuple[int, bytes]:
        self.paths.append(path)
        self.asked.append(json.loads(body))
        await self.release.wait()
        agent = path.split("/")[4]
        found = [
            {"memory_id": f"mem_held_{agent}", "status": "active"}
            if item["content"] == "tea at five"
            else None
            for item in json.loads(body)["items"]
        ]
        return 200, json.dumps({"found": found}).encode()


async def test_single_writes_behind_a_lookup_on_its_way_are_looked_up_together_per_agent() -> None:
    owners = HeldOwners()
    writes, sink, _ = _writes(owners)
    first = asyncio.create_task(writes.write(_write("mem_0", "first")))
    while not owners.asked:
        await asyncio.sleep(0)
    later = [
        asyncio.create_task(writes.write(_write("mem_1", "tea at five"))),
        asyncio.create_task(writes.write(_write("mem_2", "coffee at six"))),
        asyncio.create_task(
            writes.write(
                new_event(
                    MEMORY_WRITE_REQUESTED,
                    MemoryWriteRequested(
                        memory_id="mem_3", agent_id="agt_2", content="tea at five"
                    ),
                    tenant_id=T,
                )
            )
        ),
    ]
    await asyncio.sleep(0)
    owners.release.set()
    outcomes = await asyncio.gather(first, *later)
    assert outcomes == [
        Outcome("mem_0", "pending", deduplicated=False),
        Outcome("mem_held_agt_1", "active", deduplicated=True),
        Outcome("mem_2", "pending", deduplicated=False),
        Outcome("mem_held_agt_2", "active", deduplicated=True),
    ]
    assert [len(asked["items"]) for asked in owners.asked] == [1, 2, 1]
    assert sorted(sink.published) == ["mem_0", "mem_2"]
