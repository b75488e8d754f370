"""Tombstones find derived memories through the source index, once it covers every row."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engram_memory.adapters.rows import SOURCES, MemoryRows


def _row(memory_id: str, sources: list[str], status: str = "active") -> dict[str, object]:
    return {
        "_id": f"tnt_a:{memory_id}",
        "tenant_id": "tnt_a",
        "memory_id": memory_id,
        "agent_id": "agt_1",
        "status": status,
        "derived_from": sources,
        "created_at": datetime.now(UTC),
    }


async def test_rows_from_before_the_index_are_found_by_scan_then_by_the_backfilled_index(
    mongo_db: Any,
) -> None:
    rows = MemoryRows(mongo_db)
    await mongo_db.memories.insert_many(
        [
            _row("m_old", ["rec_1"]),
            _row("m_other", ["rec_2"]),
            _row("m_gone", ["rec_1"], status="withdrawn"),
        ]
    )
    live = ("pending", "active", "superseded")
    before = await rows.derived_via_index("tnt_a", ["rec_1"], live)
    assert [r["memory_id"] for r in before] == ["m_old"], "no index yet: the scan answers"

    assert not await MemoryRows(mongo_db).sources_complete()
    assert await rows.backfill_sources() == 3
    assert await rows.backfill_sources() == 0, "once per database"
    assert await MemoryRows(mongo_db).sources_complete(), "a restarted service reads the marker"
    await rows.index_sources("tnt_a", "m_new", ["rec_1", "fact_9"])
    await mongo_db.memories.insert_one(_row("m_new", ["rec_1", "fact_9"]))

    await mongo_db.memories.insert_one(_row("m_around", ["rec_1"]))
    found = await rows.derived_via_index("tnt_a", ["rec_1"], live)
    assert sorted(r["memory_id"] for r in found) == ["m_new", "m_old"], (
        "the index answers now: a row written around the service (never indexed) is left "
        "to the verification scan"
    )
    scanned = await rows.derived_from_any("tnt_a", ["rec_1"], live)
    assert sorted(r["memory_id"] for r in scanned) == ["m_around", "m_new", "m_old"]
    assert await rows.derived_via_index("tnt_b", ["rec_1"], live) == [], "tenant in the key"
    assert await mongo_db[SOURCES].find_one({"_id": "tnt_a:rec_1"}) is not None


async def test_a_batch_of_memories_is_indexed_under_every_source_in_one_write(
    mongo_db: Any,
) -> None:
    rows = MemoryRows(mongo_db)
    named = [(f"m_{i}", [f"rec_{i % 40}", f"fact_{i % 7}", f"rec_{i % 40}"]) for i in range(200)]
    await rows.index_sources("tnt_a", "m_before", ["rec_0"])
    await rows.index_sources_many("tnt_a", named)
    await rows.index_sources_many("tnt_a", named[:10])

    stored = {doc["_id"]: doc async for doc in mongo_db[SOURCES].find({"tenant_id": "tnt_a"})}
    assert len(stored) == 47
    assert sorted(stored["tnt_a:rec_0"]["memory_ids"]) == sorted(
        ["m_before", *(f"m_{i}" for i in range(0, 200, 40))]
    ), "added to what was there, each id once"
    assert sorted(stored["tnt_a:fact_3"]["memory_ids"]) == sorted(
        f"m_{i}" for i in range(200) if i % 7 == 3
    )
