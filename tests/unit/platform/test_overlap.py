"""Two fetches in flight: the next is prepared early, fetches complete and commit in order, and
a failure rewinds both without committing past it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka import TopicPartition
from aiokafka.errors import CommitFailedError

from engram_platform.consuming import Outcome, PreparedBatch
from engram_platform.consuming.overlap import OverlappedFetches

pytestmark = pytest.mark.unit

A, B = TopicPartition("t", 0), TopicPartition("t", 1)


def fetch(name: str, *offsets: tuple[TopicPartition, int]) -> list[Any]:
    return [
        SimpleNamespace(topic=tp.topic, partition=tp.partition, offset=o, name=name)
        for tp, o in offsets
    ]


class Steps:
    """Prepares at once; completes a fetch when the test releases it, or fails it."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.release: dict[str, asyncio.Event] = {}
        self.failing: set[str] = set()
        self.failing_prepare: set[str] = set()

    async def prepare_batch(self, records: Sequence[Any]) -> PreparedBatch:
        name = records[0].name
        if name in self.failing_prepare:
            raise ConnectionError("the DLQ went away")
        self.log.append(f"prepare {name}")
        self.release[name] = asyncio.Event()
        return PreparedBatch(outcomes=[None] * len(records), work=[(0, records[0], name)])

    async def complete_batch(self, batch: PreparedBatch) -> list[Outcome]:
        name = batch.work[0][2]
        await self.release[name].wait()  # type: ignore[index]
        if name in self.failing:
            raise ConnectionError(f"{name} could not be sent")
        self.log.append(f"complete {name}")
        return []


class Kafka:
    """Records commits and seeks; can refuse commits as after a rebalance."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.refuse = False

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        if self.refuse:
            raise CommitFailedError("rebalanced")
        self.log.append(
            "commit " + ",".join(f"{tp.partition}@{o}" for tp, o in sorted(offsets.items()))
        )

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self.log.append(f"seek {partition.partition}@{offset}")


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_the_next_fetch_is_prepared_while_this_one_completes_and_commits_in_order() -> None:
    log: list[str] = []
    steps, kafka = Steps(log), Kafka(log)
    overlapped = OverlappedFetches(steps)
    await overlapped.on_fetch(fetch("f1", (A, 10), (A, 11), (B, 5)), kafka)
    second = asyncio.ensure_future(overlapped.on_fetch(fetch("f2", (A, 12)), kafka))
    await settle()
    assert log == ["prepare f1", "prepare f2"]
    assert not second.done()
    steps.release["f2"].set()
    await settle()
    assert "complete f2" not in log
    steps.release["f1"].set()
    await second
    await overlapped.drain()
    assert log == [
        "prepare f1",
        "prepare f2",
        "complete f1",
        "commit 0@12,1@6",
        "complete f2",
        "commit 0@13",
    ]


async def test_a_failed_fetch_rewinds_itself_and_the_one_behind_and_commits_neither() -> None:
    log: list[str] = []
    steps, kafka = Steps(log), Kafka(log)
    steps.failing.add("f1")
    overlapped = OverlappedFetches(steps)
    await overlapped.on_fetch(fetch("f1", (A, 10), (A, 11)), kafka)
    steps.release["f1"].set()
    await overlapped.on_fetch(fetch("f2", (A, 12), (B, 7)), kafka)
    assert [entry for entry in log if entry.startswith(("seek", "commit", "complete"))] == [
        "seek 0@10",
        "seek 0@10",
        "seek 1@7",
    ]
    log.clear()
    await overlapped.on_fetch(fetch("f1 again", (A, 10), (A, 11)), kafka)
    steps.release["f1 again"].set()
    await overlapped.drain()
    assert log == ["prepare f1 again", "complete f1 again", "commit 0@12"]


async def test_a_fetch_that_cannot_be_prepared_is_read_again_and_the_one_before_commits() -> None:
    log: list[str] = []
    steps, kafka = Steps(log), Kafka(log)
    overlapped = OverlappedFetches(steps)
    await overlapped.on_fetch(fetch("f1", (A, 10)), kafka)
    steps.failing_prepare.add("f2")
    with pytest.raises(ConnectionError):
        await overlapped.on_fetch(fetch("f2", (A, 11)), kafka)
    steps.release["f1"].set()
    await overlapped.drain()
    assert log == ["prepare f1", "seek 0@11", "complete f1", "commit 0@11"]


async def test_a_refused_commit_is_logged_and_later_fetches_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []
    steps, kafka = Steps(log), Kafka(log)
    overlapped = OverlappedFetches(steps)
    kafka.refuse = True
    await overlapped.on_fetch(fetch("f1", (A, 10)), kafka)
    steps.release["f1"].set()
    second = asyncio.ensure_future(overlapped.on_fetch(fetch("f2", (A, 11)), kafka))
    await second
    kafka.refuse = False
    steps.release["f2"].set()
    await overlapped.drain()
    assert log == ["prepare f1", "complete f1", "prepare f2", "complete f2", "commit 0@12"]
    assert "not committed" in caplog.text


async def test_shutdown_waits_for_the_fetch_in_flight() -> None:
    log: list[str] = []
    steps, kafka = Steps(log), Kafka(log)
    overlapped = OverlappedFetches(steps)
    await overlapped.on_fetch(fetch("f1", (B, 3)), kafka)
    draining = asyncio.ensure_future(overlapped.drain())
    await settle()
    assert not draining.done()
    steps.release["f1"].set()
    await draining
    assert log == ["prepare f1", "complete f1", "commit 1@4"]
