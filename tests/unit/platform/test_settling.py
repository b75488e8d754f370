"""A fetch is settled (inputs marked, offsets committed) while the next is handled: in order,
at most one behind, and a failure reads both again without committing past it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from engram_platform.consuming.settling import SettledBehind
from tests.unit.platform.test_overlap import A, B, Kafka, fetch, settle

pytestmark = pytest.mark.unit


class Steps:
    """Handles at once (or fails); settles a fetch when the test releases it (or fails it)."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.release: dict[str, asyncio.Event] = {}
        self.failing_handle: set[str] = set()
        self.failing_settle: set[str] = set()

    async def handle(self, records: Sequence[Any]) -> str:
        name = str(records[0].name)
        if name in self.failing_handle:
            raise ConnectionError("the database went away")
        self.log.append(f"handle {name}")
        self.release[name] = asyncio.Event()
        return name

    async def settle(self, name: str) -> None:
        await self.release[name].wait()
        if name in self.failing_settle:
            raise ConnectionError(f"{name} could not be marked")
        self.log.append(f"mark {name}")


def settled_behind(log: list[str]) -> tuple[SettledBehind[str], Steps, Kafka]:
    steps = Steps(log)
    return SettledBehind(steps.handle, steps.settle), steps, Kafka(log)


async def test_the_next_fetch_is_handled_before_this_one_is_settled_in_order() -> None:
    log: list[str] = []
    behind, steps, kafka = settled_behind(log)
    await behind.on_fetch(fetch("f1", (A, 10), (A, 11), (B, 5)), kafka)
    second = asyncio.ensure_future(behind.on_fetch(fetch("f2", (A, 12)), kafka))
    await settle()
    assert log == ["handle f1", "handle f2"], "the second fetch waited for the first's settling"
    assert not second.done(), "a second settling may not trail behind the first"
    steps.release["f2"].set()
    await settle()
    assert "mark f2" not in log, "the second fetch was settled before the first"
    steps.release["f1"].set()
    await second
    await behind.drain()
    assert log == ["handle f1", "handle f2", "mark f1", "commit 0@12,1@6", "mark f2", "commit 0@13"]


async def test_a_failed_settling_reads_both_fetches_again_and_commits_neither() -> None:
    log: list[str] = []
    behind, steps, kafka = settled_behind(log)
    steps.failing_settle.add("f1")
    await behind.on_fetch(fetch("f1", (A, 10), (A, 11)), kafka)
    steps.release["f1"].set()
    await behind.on_fetch(fetch("f2", (A, 12), (B, 7)), kafka)
    assert [e for e in log if e.startswith(("seek", "commit", "mark"))] == [
        "seek 0@10",
        "seek 0@10",
        "seek 1@7",
    ]
    log.clear()
    await behind.on_fetch(fetch("f1 again", (A, 10), (A, 11)), kafka)
    steps.release["f1 again"].set()
    await behind.drain()
    assert log == ["handle f1 again", "mark f1 again", "commit 0@12"]


async def test_a_fetch_that_cannot_be_handled_is_read_again_and_the_one_before_commits() -> None:
    log: list[str] = []
    behind, steps, kafka = settled_behind(log)
    await behind.on_fetch(fetch("f1", (A, 10)), kafka)
    steps.failing_handle.add("f2")
    steps.release["f1"].set()
    with pytest.raises(ConnectionError):
        await behind.on_fetch(fetch("f2", (A, 11)), kafka)
    await behind.drain()
    assert log == ["handle f1", "mark f1", "commit 0@11", "seek 0@11"]


async def test_an_unhandled_fetch_after_a_failed_settling_goes_back_to_that_one() -> None:
    log: list[str] = []
    behind, steps, kafka = settled_behind(log)
    steps.failing_settle.add("f1")
    await behind.on_fetch(fetch("f1", (A, 10), (B, 3)), kafka)
    steps.failing_handle.add("f2")
    steps.release["f1"].set()
    with pytest.raises(ConnectionError):
        await behind.on_fetch(fetch("f2", (A, 11)), kafka)
    assert [e for e in log if e.startswith(("seek", "commit"))][-2:] == ["seek 0@10", "seek 1@3"]
    assert not any(e.startswith("commit") for e in log)


async def test_shutdown_waits_for_the_trailing_settling() -> None:
    log: list[str] = []
    behind, steps, kafka = settled_behind(log)
    await behind.on_fetch(fetch("f1", (B, 3)), kafka)
    draining = asyncio.ensure_future(behind.drain())
    await settle()
    assert not draining.done()
    steps.release["f1"].set()
    await draining
    assert log == ["handle f1", "mark f1", "commit 1@4"]
