"""Editing a memory: the body at the door, the new version it writes, one winner per version,
409s naming the newer version, 404 for what the agent does not have, and the history's tail."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from engram_events import Envelope
from engram_events.payloads.memories import Author, MemoryWriteRequested
from engram_gateway.api.memory_edits import EditMemory
from engram_gateway.domain.edits import Change, edited, refusal, with_pending_newer
from engram_gateway.domain.model import Caller
from engram_gateway.domain.submissions import Submission
from engram_gateway.service.intake import Intake
from engram_gateway.service.memory_edits import MemoryEdits
from engram_gateway.service.memory_writes import MemoryWrites
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

T = "tnt_a"
AGENT = "agt_1"
CALLER = Caller(tenant_id=T, key_id="key_7", roles=("admin",))


def _old(**fields: Any) -> dict[str, Any]:
    return {
        "memory_id": "mem_old",
        "agent_id": AGENT,
        "status": "active",
        "type": "fact",
        "content": "Acme ships on Mondays",
        "metadata": {"topic": "shipping"},
        "derived_from": ["rec_1"],
        "user_id": "usr_1",
        "session_id": "ses_1",
        **fields,
    }


# --- the body -------------------------------------------------------------------------------


def test_unknown_fields_are_refused_and_named() -> None:
    with pytest.raises(ValidationError) as bad:
        EditMemory.model_validate({"content": "x", "colour": "red", "agent_id": "agt_2"})
    assert "unknown fields: agent_id, colour" in str(bad.value)


def test_an_edit_must_change_content_metadata_or_expiry() -> None:
    with pytest.raises(ValidationError, match="give content, metadata and/or an expiry"):
        EditMemory.model_validate({"reason": "typo"})
    assert EditMemory.model_validate({"metadata": {}}).metadata == {}


def test_an_edit_may_set_an_expiry_ahead_but_not_two() -> None:
    assert EditMemory.model_validate({"ttl_seconds": 60}).ttl_seconds == 60
    for bad in (
        {"ttl_seconds": 0},
        {"ttl_seconds": 5, "expires_at": "2999-01-01T00:00:00Z"},
        {"expires_at": "2020-01-01T00:00:00Z"},
    ):
        with pytest.raises(ValidationError):
            EditMemory.model_validate(bad)


def test_the_reason_is_at_most_500_characters() -> None:
    EditMemory.model_validate({"content": "x", "reason": "r" * 500})
    with pytest.raises(ValidationError):
        EditMemory.model_validate({"content": "x", "reason": "r" * 501})
    with pytest.raises(ValidationError):
        EditMemory.model_validate({"content": "x", "reason": "lone \ud800 surrogate"})


# --- the pure part ----------------------------------------------------------------------------


def test_the_new_version_keeps_the_scope_and_replaces_what_the_edit_names() -> None:
    author = Author(key_id="key_7", role="admin")
    change = Change(content=None, metadata={"topic": "logistics"}, reason="retagged")
    write = edited(_old(), change, memory_id="mem_new", author=author)
    assert (write.content, write.metadata) == ("Acme ships on Mondays", {"topic": "logistics"})
    assert (write.type, write.user_id, write.session_id) == ("fact", "usr_1", "ses_1")
    assert write.derived_from == ["rec_1"] and write.supersedes == "mem_old"
    assert write.author == author and write.reason == "retagged"
    assert not write.allow_duplicate, "an edit is deduplicated like any write"
    kept = edited(
        _old(), Change("Acme ships on Tuesdays", None, None), memory_id="m", author=author
    )
    assert kept.metadata == {"topic": "shipping"}, "metadata not given stays"


def test_the_new_version_keeps_the_old_expiry_unless_the_edit_gives_one() -> None:
    author = Author(key_id="key_7", role="admin")
    soon, later = datetime(2030, 1, 1, tzinfo=UTC), datetime(2031, 1, 1, tzinfo=UTC)
    kept = edited(_old(expires_at=soon), Change("x", None, None), memory_id="m", author=author)
    moved = edited(
        _old(expires_at=soon), Change(None, None, None, later), memory_id="m", author=author
    )
    never = edited(_old(), Change("x", None, None), memory_id="m", author=author)
    assert (kept.expires_at, moved.expires_at, never.expires_at) == (soon, later, None)
    assert moved.content == "Acme ships on Mondays"


def test_only_a_live_stored_version_may_be_edited() -> None:
    assert refusal(_old()) is None
    superseded = refusal(_old(status="superseded", superseded_by="mem_newer"))
    assert superseded is not None and superseded.superseded_by == "mem_newer"
    for status in ("pending", "withdrawn", "rejected"):
        refused = refusal(_old(status=status))
        assert refused is not None and refused.status == status


def test_the_history_shows_a_newer_version_only_the_gateway_knows() -> None:
    versions = [{"memory_id": "mem_old", "status": "active"}]
    assert with_pending_newer(versions, None) == versions
    shown = with_pending_newer(versions, "mem_new")
    assert shown[-1] == {"memory_id": "mem_new", "status": "pending", "supersedes": "mem_old"}
    both = [*versions, {"memory_id": "mem_new", "status": "pending"}]
    assert with_pending_newer(both, "mem_new") == both, "never listed twice"


# --- the use case, with fakes -----------------------------------------------------------------


class MemoryService:
    """The memory service's internal reads: memories by id, one history, no duplicates."""

    def __init__(self, rows: dict[str, dict[str, Any]], *, live: bool = True) -> None:
        self.rows = rows
        self.live = live
        self.history: dict[str, Any] | None = None

    async def read_post(
        self, service: str, path: str, body: bytes, *, tenant_id: str
    ) -> tuple[int, bytes]:
        assert path.endswith("/duplicates")
        if not self.live:
            return 503, b""
        return 200, json.dumps({"found": [None for _ in json.loads(body)["items"]]}).encode()

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response:
        if not self.live:
            return httpx.Response(503)
        if path.endswith("/history"):
            return httpx.Response(200, json=self.history) if self.history else httpx.Response(404)
        memory_id = path.rsplit("/", 1)[-1]
        row = self.rows.get(memory_id)
        if tenant_id != T or row is None or row["agent_id"] not in path:
            return httpx.Response(404, json={"detail": "no such memory"})
        return httpx.Response(200, json=row)


class Claims:
    """The gateway's edit claims, unique per (tenant, version) as the `_id` makes them."""

    def __init__(self) -> None:
        self.held: dict[tuple[str, str], str] = {}

    async def claim(self, tenant_id: str, memory_id: str, newer_id: str, agent_id: str) -> bool:
        await asyncio.sleep(0)
        if (tenant_id, memory_id) in self.held:
            return False
        self.held[(tenant_id, memory_id)] = newer_id
        return True

    async def holder(self, tenant_id: str, memory_id: str) -> str | None:
        return self.held.get((tenant_id, memory_id))

    async def take_over(self, tenant_id: str, memory_id: str, loser_id: str, newer_id: str) -> bool:
        if self.held.get((tenant_id, memory_id)) != loser_id:
            return False
        self.held[(tenant_id, memory_id)] = newer_id
        return True

    async def release(self, tenant_id: str, memory_id: str, newer_id: str) -> None:
        if self.held.get((tenant_id, memory_id)) == newer_id:
            del self.held[(tenant_id, memory_id)]


class Sink:
    def __init__(self, *, fail: bool = False) -> None:
        self.published: list[MemoryWriteRequested] = []
        self.fail = fail

    async def publish(self, event: Envelope[Any]) -> None:
        await asyncio.sleep(0)
        if self.fail:
            raise ConnectionError("broker down")
        self.published.append(event.payload)

    async def publish_many(self, events: Sequence[Envelope[Any]]) -> None:
        raise AssertionError("an edit publishes one event")


class Log:
    def __init__(self, noted: dict[str, Submission] | None = None) -> None:
        self.noted = noted or {}

    async def record(
        self, tenant_id: str, kind: str, item_id: str, **fields: Any
    ) -> Submission | None:
        self.noted[item_id] = Submission(kind, item_id, agent_id=fields.get("agent_id"))
        return None

    async def record_many(
        self, tenant_id: str, kind: str, items: list[tuple[str, dict[str, Any]]]
    ) -> int:
        return 0

    async def get(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        return self.noted.get(item_id)

    async def release(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        return None


def _edits(
    service: MemoryService, sink: Sink | None = None, log: Log | None = None
) -> tuple[MemoryEdits, Sink, Claims]:
    sink, log, claims = sink or Sink(), log or Log(), Claims()
    writes = MemoryWrites(service, Intake(sink, log))
    return MemoryEdits(service, log, claims, writes), sink, claims


async def _edit(edits: MemoryEdits, memory_id: str, content: str) -> str:
    write = await edits.prepare(CALLER, AGENT, memory_id, Change(content, None, "fix"))
    return (await edits.commit(T, write)).memory_id


async def test_an_edit_queues_one_superseding_write_naming_its_key_and_role() -> None:
    edits, sink, claims = _edits(MemoryService({"mem_old": _old()}))
    newer = await _edit(edits, "mem_old", "Acme ships on Tuesdays")
    [write] = sink.published
    assert write.memory_id == newer != "mem_old" and write.supersedes == "mem_old"
    assert write.author == Author(key_id="key_7", role="admin") and write.reason == "fix"
    assert claims.held == {(T, "mem_old"): newer}


async def test_two_concurrent_edits_of_one_version_leave_one_winner_and_one_409() -> None:
    edits, sink, _ = _edits(MemoryService({"mem_old": _old()}))
    results = await asyncio.gather(
        _edit(edits, "mem_old", "Acme ships on Tuesdays"),
        _edit(edits, "mem_old", "Acme ships on Fridays"),
        return_exceptions=True,
    )
    won = [r for r in results if isinstance(r, str)]
    lost = [r for r in results if isinstance(r, Problem)]
    assert len(won) == 1 and len(lost) == 1 and len(sink.published) == 1
    assert lost[0].status == 409 and lost[0].extra["superseded_by"] == won[0]


async def test_editing_a_superseded_version_is_a_409_naming_the_newer_one() -> None:
    rows = {"mem_old": _old(status="superseded", superseded_by="mem_newer")}
    edits, sink, _ = _edits(MemoryService(rows))
    with pytest.raises(Problem) as refused:
        await _edit(edits, "mem_old", "again")
    assert refused.value.status == 409 and refused.value.extra["superseded_by"] == "mem_newer"
    assert sink.published == []


async def test_a_missing_or_foreign_memory_is_a_404_and_a_queued_one_a_409() -> None:
    edits, _, _ = _edits(MemoryService({"mem_old": _old(agent_id="agt_other")}))
    for memory_id in ("mem_old", "mem_missing"):
        with pytest.raises(Problem) as missing:
            await _edit(edits, memory_id, "x")
        assert missing.value.status == 404
    queued, _, _ = _edits(
        MemoryService({}), log=Log({"mem_q": Submission("memory", "mem_q", agent_id=AGENT)})
    )
    with pytest.raises(Problem) as pending:
        await _edit(queued, "mem_q", "x")
    assert pending.value.status == 409 and pending.value.extra["memory_status"] == "pending"


async def test_a_refused_publish_gives_the_version_back() -> None:
    edits, _, claims = _edits(MemoryService({"mem_old": _old()}), sink=Sink(fail=True))
    with pytest.raises(Problem) as refused:
        await _edit(edits, "mem_old", "Acme ships on Tuesdays")
    assert refused.value.status == 503 and claims.held == {}


@pytest.mark.parametrize("abandoned", ["rejected", "withdrawn"])
async def test_a_claim_whose_version_never_superseded_is_taken_over(abandoned: str) -> None:
    service = MemoryService({"mem_old": _old(), "mem_bad": _old(memory_id="mem_bad")})
    service.rows["mem_bad"]["status"] = abandoned
    edits, sink, claims = _edits(service)
    claims.held[(T, "mem_old")] = "mem_bad"
    newer = await _edit(edits, "mem_old", "Acme ships on Tuesdays")
    assert claims.held[(T, "mem_old")] == newer and len(sink.published) == 1


async def test_a_claim_whose_version_is_still_pending_holds() -> None:
    service = MemoryService({"mem_old": _old(), "mem_q": _old(memory_id="mem_q")})
    service.rows["mem_q"]["status"] = "pending"
    edits, sink, claims = _edits(service)
    claims.held[(T, "mem_old")] = "mem_q"
    with pytest.raises(Problem) as refused:
        await _edit(edits, "mem_old", "Acme ships on Tuesdays")
    assert refused.value.status == 409 and refused.value.extra["superseded_by"] == "mem_q"
    assert sink.published == [] and claims.held[(T, "mem_old")] == "mem_q"


async def test_the_history_ends_with_the_newer_version_the_gateway_queued() -> None:
    service = MemoryService({"mem_old": _old()})
    service.history = {
        "memory_id": "mem_old",
        "agent_id": AGENT,
        "versions": [{"memory_id": "mem_old", "status": "active", "superseded_by": None}],
    }
    edits, _, _ = _edits(service)
    newer = await _edit(edits, "mem_old", "Acme ships on Tuesdays")
    shown = await edits.history(T, AGENT, "mem_old")
    assert [v["memory_id"] for v in shown["versions"]] == ["mem_old", newer]
    service.history = None
    with pytest.raises(Problem) as missing:
        await edits.history(T, AGENT, "mem_missing")
    assert missing.value.status == 404
