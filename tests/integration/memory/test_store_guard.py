"""Storing a vector's row over the real database: only rows still pending become active, so a
memory withdrawn meanwhile stays withdrawn, and the store learns which rows hold the status."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engram_memory.adapters.rows import MemoryRows

T = "tnt_a"


def opening(memory_id: str, **fields: Any) -> dict[str, Any]:
    """The fields every row opens with (a write's ids, type, hash and time), and these."""
    recorded = {
        "memory_id": memory_id,
        "agent_id": "agt_1",
        "type": "fact",
        "content_sha256": "0" * 64,
        "created_at": datetime(2026, 12, 7, tzinfo=UTC),
    }
    return {**recorded, **fields}


async def test_only_rows_still_pending_are_set(mongo_db: Any) -> None:
    rows = MemoryRows(mongo_db)
    opened = await rows.open_many(
        T,
        [(opening(f"mem_{n}", content=f"c{n}"), "pending") for n in range(3)],
    )
    assert all(opened)
    await rows.set_fields(T, "mem_1", {"status": "withdrawn"}, drop_content=True)
    done = await rows.set_pending(T, ["mem_0", "mem_1", "mem_2", "mem_9"], {"status": "active"})
    assert done == {"mem_0", "mem_2"}
    found = await rows.get_many(T, ["mem_0", "mem_1", "mem_2"])
    assert {m: r.status for m, r in found.items()} == {
        "mem_0": "active",
        "mem_1": "withdrawn",
        "mem_2": "active",
    }
    again = await rows.set_pending(T, ["mem_0", "mem_1"], {"status": "active"})
    assert again == {"mem_0"}, "a row another delivery already set counts; a withdrawn one not"


async def test_a_row_named_by_a_newer_version_never_becomes_active(mongo_db: Any) -> None:
    rows = MemoryRows(mongo_db)
    await rows.open_many(T, [(opening(f"mem_{n}"), "pending") for n in range(2)])
    assert await rows.supersede(T, "mem_0", agent_id="agt_1", by="mem_9", held="active") is False
    assert await rows.supersede(T, "mem_0", agent_id="agt_1", by="mem_9", held="pending")
    assert await rows.set_pending(T, ["mem_0", "mem_1"], {"status": "active"}) == {"mem_1"}
    assert await rows.set_pending(T, ["mem_0"], {"status": "superseded"}) == {"mem_0"}
    found = await rows.get_many(T, ["mem_0", "mem_1"])
    assert {m: (r.status, r.superseded_by) for m, r in found.items()} == {
        "mem_0": ("superseded", "mem_9"),
        "mem_1": ("active", None),
    }


async def test_superseding_holds_to_the_status_it_expects(mongo_db: Any) -> None:
    rows = MemoryRows(mongo_db)
    await rows.open_many(
        T,
        [
            (opening("mem_a"), "active"),
            (opening("mem_w"), "withdrawn"),
        ],
    )

    def supersede(memory_id: str, by: str, held: str, agent: str = "agt_1") -> Any:
        return rows.supersede(T, memory_id, agent_id=agent, by=by, held=held)

    assert await supersede("mem_a", "mem_b", "pending") is False
    assert await supersede("mem_a", "mem_b", "active", agent="agt_2") is False
    assert await supersede("mem_a", "mem_b", "active")
    assert await supersede("mem_a", "mem_b", "active"), "a replay by the same version matches"
    assert await supersede("mem_a", "mem_c", "active") is False, "the first newer version wins"
    assert await supersede("mem_w", "mem_b", "active") is False
    found = await rows.get_many(T, ["mem_a", "mem_w"])
    assert {m: (r.status, r.superseded_by) for m, r in found.items()} == {
        "mem_a": ("superseded", "mem_b"),
        "mem_w": ("withdrawn", None),
    }


async def test_rows_opened_are_returned_as_a_read_returns_them(mongo_db: Any) -> None:
    rows = MemoryRows(mongo_db)
    created = datetime(2026, 12, 7, 6, 30, 1, 123456, tzinfo=UTC)
    fields = opening(
        "mem_r",
        content="c",
        created_at=created,
        metadata={"n": 2**40, "at": "2026-12-07T06:30:01Z"},
    )
    [opened] = await rows.open_many(T, [(fields, "pending")])
    assert opened is not None
    read = (await rows.get_many(T, ["mem_r"]))["mem_r"]
    assert opened == read, "a store in the same pass uses the row without reading it"
    assert opened.created_at == created.replace(microsecond=123000)


async def test_a_rejection_drops_the_content_of_a_row_still_pending_only(mongo_db: Any) -> None:
    rows = MemoryRows(mongo_db)
    await rows.open_many(
        T,
        [(opening(f"mem_{n}", content=f"c{n}"), "pending") for n in (5, 6)],
    )
    await rows.set_fields(T, "mem_6", {"status": "withdrawn"})
    refused = {"status": "rejected", "reason": "embedder_empty"}
    done = await rows.set_pending(T, ["mem_5", "mem_6"], refused, drop_content=True)
    assert done == {"mem_5"}
    found = await rows.get_many(T, ["mem_5", "mem_6"])
    assert (found["mem_5"].status, found["mem_5"].content is not None) == ("rejected", False)
    assert (found["mem_6"].status, found["mem_6"].content) == ("withdrawn", "c6")
