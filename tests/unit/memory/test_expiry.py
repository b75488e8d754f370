"""Expiry: a lapsed memory reads `expired` and leaves recall at once; the sweeper removes its
point and marks its row, and a sweep cut short is finished by the next one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram_embedders import HashingEmbedder
from engram_events import Envelope
from engram_memory.adapters.rows import memory_row
from engram_memory.adapters.vectors import MemoryVectors
from engram_memory.api.views import memory_view
from engram_memory.domain.dedup import is_duplicate_of
from engram_memory.domain.expiry import EXPIRABLE_STATUSES, effective_status, lapsed
from engram_memory.domain.history import version_view
from engram_memory.domain.rows import MemoryRow
from engram_memory.service.expiry import ExpirySweeper
from engram_memory.service.recall import Recall
from engram_vectors import ExactNumpyStore
from tests.support.audit_fakes import AuditEntries

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
PAST, FUTURE = NOW - timedelta(seconds=1), NOW + timedelta(hours=1)


def row(memory_id: str, status: str = "active", expires_at: Any = None) -> dict[str, Any]:
    found = {
        "tenant_id": "tnt_a",
        "agent_id": "agt_a",
        "memory_id": memory_id,
        "type": "fact",
        "status": status,
        "content": f"the warehouse contract note {memory_id}",
        "content_sha256": "0" * 64,
        "created_at": NOW - timedelta(days=1),
    }
    return {**found, "expires_at": expires_at} if expires_at is not None else found


@pytest.mark.parametrize("status", EXPIRABLE_STATUSES)
def test_a_live_memory_past_its_expiry_reads_expired(status: str) -> None:
    assert effective_status(row("m", status, PAST), NOW) == "expired"
    assert effective_status(row("m", status, FUTURE), NOW) == status
    assert effective_status(row("m", status), NOW) == status


def test_expiry_is_read_from_naive_mongo_datetimes_and_payload_text() -> None:
    assert lapsed(row("m", "active", PAST.replace(tzinfo=None)), NOW)
    assert lapsed(row("m", "active", PAST.isoformat()), NOW)
    assert not lapsed(row("m", "active", FUTURE.isoformat()), NOW)


def test_withdrawn_or_rejected_memories_keep_their_status_after_expiry() -> None:
    for status in ("withdrawn", "rejected", "expired"):
        assert effective_status(row("m", status, PAST), NOW) == status


def test_the_view_shows_a_lapsed_memory_as_expired_with_its_expiry() -> None:
    view = memory_view(memory_row(row("m", "active", datetime.now(UTC) - timedelta(seconds=1))))
    assert view["status"] == "expired"
    assert "expires_at" in view


def test_a_lapsed_version_in_a_history_reads_expired() -> None:
    lapsed_row = memory_row(row("m", "superseded", datetime.now(UTC) - timedelta(seconds=1)))
    assert version_view(lapsed_row)["status"] == "expired"
    assert version_view(memory_row(row("m", "superseded")))["status"] == "superseded"


def test_an_expired_memory_no_longer_makes_a_write_a_duplicate() -> None:
    live = memory_row(row("m", "active", datetime.now(UTC) + timedelta(hours=1)))
    assert is_duplicate_of(live, None)
    lapsed_row = memory_row(row("m", "active", datetime.now(UTC) - timedelta(seconds=1)))
    assert not is_duplicate_of(lapsed_row, None)


class Lapsed:
    """The rows the sweeper reads: live ones past their expiry, across tenants."""

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self.rows = {r["memory_id"]: dict(r) for r in rows}

    async def lapsed(self, now: datetime, limit: int) -> list[MemoryRow]:
        found = [r for r in self.rows.values() if lapsed(r, now)]
        return [memory_row(r) for r in sorted(found, key=lambda r: r["expires_at"])[:limit]]


class Points:
    """Point ids by tenant; `remove` ignores absent ones, as the store does."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = set(ids)
        self.removed: list[str] = []

    async def remove(self, tenant_id: str, memory_ids: Sequence[str]) -> None:
        self.removed += memory_ids
        self.ids -= set(memory_ids)


class Staged:
    """The outbox write: marks rows and keeps their events; can fail once, like a crash."""

    def __init__(self, rows: Lapsed, *, fail_once: bool = False) -> None:
        self.rows = rows
        self.fail_once = fail_once
        self.events: list[Envelope[Any]] = []
        self.kept_content: list[bool] = []

    async def withdraw(
        self,
        tenant_id: str,
        changes: Sequence[tuple[str, Mapping[str, Any], Envelope[Any]]],
        *,
        keep_content: bool = False,
    ) -> None:
        if self.fail_once:
            self.fail_once = False
            raise ConnectionError("the database went away")
        for memory_id, fields, event in changes:
            self.rows.rows[memory_id].update(fields)
            self.events.append(event)
            self.kept_content.append(keep_content)


def sweeper(
    rows: Lapsed,
    points: Points,
    staged: Staged,
    batch: int = 500,
    audit: AuditEntries | None = None,
) -> ExpirySweeper:
    audit = audit if audit is not None else AuditEntries()
    return ExpirySweeper(rows, points, staged, audit, batch=batch)  # type: ignore[arg-type]


async def test_the_sweep_removes_points_then_marks_rows_expired_keeping_content() -> None:
    rows = Lapsed([row("m1", "active", PAST), row("m2", "active", FUTURE), row("m3", "active")])
    points = Points(["m1", "m2", "m3"])
    staged = Staged(rows)
    assert await sweeper(rows, points, staged).sweep(NOW) == 1
    assert points.ids == {"m2", "m3"}
    assert [r["status"] for r in rows.rows.values()] == ["expired", "active", "active"]
    assert rows.rows["m1"]["expired_at"] == NOW
    assert staged.kept_content == [True]
    [event] = staged.events
    assert event.event_type == "memory.withdrawn" and event.payload.reason == "expired"


async def test_a_sweep_cut_short_after_removing_points_is_finished_by_the_next() -> None:
    rows = Lapsed([row("m1", "active", PAST), row("m2", "superseded", PAST)])
    points = Points(["m1", "m2"])
    staged = Staged(rows, fail_once=True)
    with pytest.raises(ConnectionError):
        await sweeper(rows, points, staged).sweep(NOW)
    assert points.ids == set()
    assert {r["status"] for r in rows.rows.values()} == {"active", "superseded"}
    assert await sweeper(rows, points, staged).sweep(NOW) == 2
    assert {r["status"] for r in rows.rows.values()} == {"expired"}
    assert await sweeper(rows, points, staged).sweep(NOW) == 0
    assert len({e.event_id for e in staged.events}) == 2


async def test_each_expired_memory_is_audited_once_by_the_system_without_its_content() -> None:
    rows = Lapsed([row("m1", "active", PAST), row("m2", "superseded", PAST)])
    points = Points(["m1", "m2"])
    staged = Staged(rows, fail_once=True)
    audit = AuditEntries()
    with pytest.raises(ConnectionError):
        await sweeper(rows, points, staged, audit=audit).sweep(NOW)
    assert await sweeper(rows, points, staged, audit=audit).sweep(NOW) == 2
    entries = audit.of("memory.expired")
    assert sorted(e.target["memory_id"] for e in entries) == ["m1", "m2"]
    assert {e.actor.kind for e in entries} == {"system"}
    assert {e.target["agent_id"] for e in entries} == {rows.rows["m1"]["agent_id"]}
    assert all(str(rows.rows["m1"]["content"]) not in e.model_dump_json() for e in entries)


async def test_a_sweep_whose_audit_fails_expires_nothing_until_the_next() -> None:
    rows = Lapsed([row("m1", "active", PAST)])
    points = Points(["m1"])
    audit = AuditEntries(failing=True)
    with pytest.raises(ConnectionError):
        await sweeper(rows, points, Staged(rows), audit=audit).sweep(NOW)
    assert rows.rows["m1"]["status"] == "active" and points.ids == {"m1"}
    audit.failing = False
    assert await sweeper(rows, points, Staged(rows), audit=audit).sweep(NOW) == 1
    assert len(audit.of("memory.expired")) == 1


async def test_a_sweep_walks_every_batch() -> None:
    rows = Lapsed([row(f"m{n}", "active", PAST - timedelta(seconds=n)) for n in range(7)])
    points = Points([f"m{n}" for n in range(7)])
    assert await sweeper(rows, points, Staged(rows), batch=3).sweep(NOW) == 7
    assert points.ids == set()


async def test_recall_leaves_out_a_lapsed_memory_whose_point_is_still_there() -> None:
    embedder = HashingEmbedder()
    vectors = MemoryVectors(ExactNumpyStore(), "memories")
    provenance = {
        **embedder.provenance.model_dump(),
        "fingerprint": embedder.provenance.fingerprint,
    }
    await vectors.open(embedder.provenance.dimension, embedder.provenance.fingerprint)
    now = datetime.now(UTC)
    rows = [row("gone", "active", now - timedelta(seconds=1)), row("kept", "active", FUTURE)]
    rows[1]["expires_at"] = now + timedelta(hours=1)
    embedded = await embedder.embed([str(r["content"]) for r in rows])
    await vectors.put_many(
        [(memory_row(r), v, "active") for r, v in zip(rows, embedded.vectors, strict=True)],
        provenance,
    )
    recall = Recall(embedder, vectors)
    for half_life in (None, 30.0):
        found = await recall.recall(
            "tnt_a", "agt_a", "warehouse contract", 5, min_score=-1.0,
            recency_half_life_days=half_life,
        )  # fmt: skip
        assert [hit["memory_id"] for hit in found.results] == ["kept"]
