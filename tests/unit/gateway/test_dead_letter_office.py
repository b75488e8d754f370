"""A tenant's dead letters: a page of views without the message, one letter replayed once with
a clear answer when it cannot be, and a consumer's letters replayed together."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest

from engram_events.payloads.dlq import DeadLetter
from engram_gateway.domain.dead_letters import Letter
from engram_gateway.service.dead_letters import DeadLetterOffice
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

T = "tnt_a"
AT = datetime(2026, 12, 7, tzinfo=UTC)


def _letter(offset: int, consumer: str, replayed: bool = False) -> Letter:
    letter = DeadLetter(
        consumer=consumer,
        topic="engram.memories.v1",
        partition=0,
        offset=offset,
        event_id=f"e{offset}",
        event_type="memory.write_requested",
        tenant_id=T,
        error_type="ValueError",
        error="the words the tenant wrote",
        attempts=1,
        value_base64=base64.b64encode(b"{}").decode(),
        failed_at=AT,
    )
    return Letter(0, offset, letter, AT if replayed else None)


class Box:
    """The DLQ topic's letters of one tenant; a replay answers from `results` (else replayed)."""

    def __init__(self, letters: list[Letter], results: dict[str, str] | None = None) -> None:
        self.letters = letters
        self.results = results or {}
        self.replayed: list[set[str]] = []

    async def read(self, tenant_id: str) -> list[Letter]:
        return self.letters if tenant_id == T else []

    async def replay(self, tenant_id: str, letter_ids: set[str]) -> dict[str, str]:
        self.replayed.append(set(letter_ids))
        return {i: self.results.get(i, "replayed") for i in letter_ids}


async def test_a_page_shows_the_newest_letters_without_their_messages() -> None:
    office = DeadLetterOffice(Box([_letter(3, "memory"), _letter(2, "memory", replayed=True)]))
    page = await office.page(T, limit=1)
    assert [(v["letter_id"], v["replayed"]) for v in page] == [("0-3", False)]
    assert "the words" not in repr(page)
    assert [v["replayed"] for v in await office.page(T, limit=5)] == [False, True]
    assert await office.page("tnt_b", limit=5) == []


@pytest.mark.parametrize(
    ("result", "status", "problem_type"),
    [
        ("not_found", 404, None),
        ("already_replayed", 409, "already-replayed"),
        ("not_replayable", 409, "not-replayable"),
    ],
)
async def test_a_replay_that_does_not_happen_says_why(
    result: str, status: int, problem_type: str | None
) -> None:
    office = DeadLetterOffice(Box([], {"0-9": result}))
    with pytest.raises(Problem) as refused:
        await office.replay_one(T, "0-9")
    assert refused.value.status == status
    if problem_type:
        assert refused.value.kind == problem_type


async def test_one_letter_replays_and_a_consumer_replays_only_its_letters_left() -> None:
    box = Box([_letter(1, "memory"), _letter(2, "memory", replayed=True), _letter(3, "ingest")])
    office = DeadLetterOffice(box)
    assert await office.replay_one(T, "0-1") == "replayed"
    assert await office.replay_consumer(T, "memory") == {"0-1": "replayed"}
    assert box.replayed == [{"0-1"}, {"0-1"}]
