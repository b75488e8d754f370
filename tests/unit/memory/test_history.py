"""A memory's history: the whole chain from any version, a newer version still pending found by
its `supersedes`, and a chain that never leaves its agent nor loops."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram_events import new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.payloads.memories import Author, MemoryWriteRequested
from engram_memory.domain.history import earliest_successor
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.writes import CONTENT_FIELDS, content_fields, row_fields
from engram_memory.service.history import History

pytestmark = pytest.mark.unit

T = "tnt_a"
START = datetime(2026, 1, 1, tzinfo=UTC)


class Versions:
    """Rows by id and the newer rows naming one in `supersedes`, as the row store answers."""

    def __init__(self, *rows: MemoryRow) -> None:
        self.rows = {row.memory_id: row for row in rows}
        self.reads = 0

    async def get(self, tenant_id: str, memory_id: str) -> MemoryRow | None:
        self.reads += 1
        return self.rows.get(memory_id) if tenant_id == T else None

    async def successors(
        self, tenant_id: str, agent_id: str, memory_id: str, since: datetime
    ) -> list[MemoryRow]:
        return [
            row
            for row in self.rows.values()
            if row.agent_id == agent_id and row.supersedes == memory_id and row.created_at >= since
        ]


def _row(
    n: int,
    status: str = "active",
    agent: str = "agt_1",
    supersedes: str | None = None,
    superseded_by: str | None = None,
) -> MemoryRow:
    return MemoryRow(
        tenant_id=T,
        memory_id=f"mem_{n}",
        agent_id=agent,
        status=status,
        type="fact",
        content_sha256="ab" * 32,
        created_at=START + timedelta(minutes=n),
        content=f"version {n}",
        metadata={},
        author={"key_id": f"key_{n}", "role": "default"},
        edit_reason=f"reason {n}" if n > 1 else None,
        supersedes=supersedes,
        superseded_by=superseded_by,
    )


def _chain() -> Versions:
    return Versions(
        _row(1, "superseded", superseded_by="mem_2"),
        _row(2, "superseded", supersedes="mem_1", superseded_by="mem_3"),
        _row(3, "active", supersedes="mem_2"),
        _row(4, "pending", supersedes="mem_3"),
    )


@pytest.mark.parametrize("start", ["mem_1", "mem_2", "mem_3", "mem_4"])
async def test_every_version_lists_the_whole_chain_oldest_first(start: str) -> None:
    versions = await History(_chain()).versions(T, "agt_1", start)
    assert versions is not None
    assert [v["memory_id"] for v in versions] == ["mem_1", "mem_2", "mem_3", "mem_4"]
    assert [v["status"] for v in versions] == ["superseded", "superseded", "active", "pending"]
    assert versions[2]["author"] == {"key_id": "key_3", "role": "default"}
    assert versions[2]["edit_reason"] == "reason 3" and versions[2]["content"] == "version 3"
    assert "tenant_id" not in versions[0] and "content_sha256" not in versions[0]


async def test_a_missing_or_another_agents_memory_has_no_history() -> None:
    history = History(_chain())
    assert await history.versions(T, "agt_1", "mem_9") is None
    assert await history.versions(T, "agt_2", "mem_1") is None
    assert await history.versions("tnt_b", "agt_1", "mem_1") is None


async def test_a_chain_never_leaves_its_agent_nor_loops() -> None:
    rows = Versions(
        _row(1, "superseded", agent="agt_2", superseded_by="mem_2"),
        _row(2, "superseded", supersedes="mem_1", superseded_by="mem_3"),
        _row(3, "superseded", supersedes="mem_2", superseded_by="mem_2"),
    )
    versions = await History(rows).versions(T, "agt_1", "mem_2")
    assert versions is not None and [v["memory_id"] for v in versions] == ["mem_2", "mem_3"]


def test_of_two_rows_naming_one_version_the_earliest_is_its_successor() -> None:
    rows = [_row(5, supersedes="mem_3"), _row(4, supersedes="mem_3"), _row(2, supersedes="x")]
    found = earliest_successor(rows, "mem_3")
    assert found is not None and found.memory_id == "mem_4"
    assert earliest_successor(rows, "mem_9") is None


def test_a_row_records_who_wrote_it_and_why_and_loses_the_reason_with_the_content() -> None:
    write = MemoryWriteRequested(
        memory_id="mem_2",
        agent_id="agt_1",
        content="version 2",
        supersedes="mem_1",
        author=Author(key_id="key_7", role="admin"),
        reason="a typo",
    )
    fields = row_fields(new_event(MEMORY_WRITE_REQUESTED, write, tenant_id=T))
    assert fields["author"] == {"key_id": "key_7", "role": "admin"}
    assert content_fields(write)["edit_reason"] == "a typo" and "edit_reason" in CONTENT_FIELDS
    plain = write.model_copy(update={"author": None, "reason": None})
    assert "author" not in row_fields(new_event(MEMORY_WRITE_REQUESTED, plain, tenant_id=T))
    assert "edit_reason" not in content_fields(plain)


def test_an_imported_memory_keeps_the_time_it_was_first_made() -> None:
    write = MemoryWriteRequested(memory_id="m1", agent_id="a1", content="c", created_at=START)
    event = new_event(MEMORY_WRITE_REQUESTED, write, tenant_id=T)
    assert row_fields(event)["created_at"] == START
    plain = new_event(
        MEMORY_WRITE_REQUESTED, write.model_copy(update={"created_at": None}), tenant_id=T
    )
    assert row_fields(plain)["created_at"] == plain.occurred_at
