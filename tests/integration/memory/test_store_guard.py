"""Storing a vector's row over the real database: only rows still pending become active, so a
memory withdrawn meanwhile stays withdrawn, and the store learns which rows hold the status."""

from __future__ import annotations

from typing import Any

from engram_memory.adapters.rows import MemoryRows

T = "tnt_a"


async def test_only_rows_still_pending_are_set(mongo_db: Any) -> None:
    rows = MemoryRows(mongo_db)
    opened = await rows.open_many(
        T,
        [
            ({"memory_id": f"mem_{n}", "agent_id": "agt_1", "content": f"c{n}"}, "pending")
            for n in range(3)
        ],
    )
    assert all(opened)
    await rows.set_fields(T, "mem_1", {"status": "withdrawn"}, drop_content=True)
    done = await rows.set_pending(T, ["mem_0", "mem_1", "mem_2", "mem_9"], {"status": "active"})
    assert done == {"mem_0", "mem_2"}
    found = await rows.get_many(T, ["mem_0", "mem_1", "mem_2"])
    assert {m: r["status"] for m, r in found.items()} == {
        "mem_0": "active",
        "mem_1": "withdrawn",
        "mem_2": "active",
    }
    again = await rows.set_pending(T, ["mem_0", "mem_1"], {"status": "active"})
    assert again == {"mem_0"}, "a row another delivery already set counts; a withdrawn one not"
