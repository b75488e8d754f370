"""Tombstones find derived memories through the `derived_from` index, or where the server
cannot serve it (the local server), through the source index the service keeps."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engram_memory.adapters.rows import SOURCES, MemoryRows

LIVE = ("pending", "active", "superseded")


def _row(memory_id: str, sources: list[str], status: str = "active") -> dict[str, object]:
    return {
        "_id": f"tnt_a:{memory_id}",
        "tenant_id": "tnt_a",
        "memory_id": memory_id,
        "agent_id": "agt_1",
        "status": status,
        "type": "fact",
        "content_sha256": "0" * 64,
        "derived_from": sources,
        "created_at": datetime.now(UTC),
    }


async def test_with_the_index_declared_nothing_is_kept_and_rows_are_found_by_their_sources(
    mongo_db: Any,
) -> None:
    rows = MemoryRows(mongo_db, source_index=False)
    await rows.index_sources("tnt_a", "m_1", ["rec_1"])
    await mongo_db.memories.insert_many(
        [
            _row("m_1", ["rec_1"]),
            _row("m_2", ["rec_2", "rec_1"]),
            _row("m_3", ["rec_3"]),
            _row("m_gone", ["rec_1"], status="withdrawn"),
        ]
    )

    found = await rows.derived_via_index("tnt_a", ["rec_1"], LIVE)

    assert sorted(r.memory_id for r in found) == ["m_1", "m_2"]
    assert await rows.derived_via_index("tnt_b", ["rec_1"], LIVE) == []
    assert await mongo_db[SOURCES].count_documents({}) == 0, "no index kept by hand"


async def test_the_kept_source_index_answers_for_rows_written_through_it(mongo_db: Any) -> None:
    rows = MemoryRows(mongo_db, source_index=True)
    await rows.index_sources("tnt_a", "m_new", ["rec_1", "fact_9"])
    await mongo_db.memories.insert_one(_row("m_new", ["rec_1", "fact_9"]))
    await mongo_db.memories.insert_one(_row("m_around", ["rec_1"]))

    found = await rows.derived_via_index("tnt_a", ["rec_1"], LIVE)

    assert [r.memory_id for r in found] == ["m_new"], (
        "the kept index answers: a row written around the service (never indexed) is left to "
        "the verification scan"
    )
    scanned = await rows.derived_from_any("tnt_a", ["rec_1"], LIVE)
    assert sorted(r.memory_id for r in scanned) == ["m_around", "m_new"]
    assert await rows.derived_via_index("tnt_b", ["rec_1"], LIVE) == [], "tenant in the key"
    assert await mongo_db[SOURCES].find_one({"_id": "tnt_a:rec_1"}) is not None


async def test_a_batch_of_memories_is_indexed_under_every_source_in_one_write(
    mongo_db: Any,
) -> None:
    rows = MemoryRows(mongo_db, source_index=True)
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


async def test_the_verification_counts_the_same_with_the_index_or_the_scan(mongo_db: Any) -> None:
    await mongo_db.memories.insert_many(
        [
            _row("m_1", ["rec_1", "fact_1"]),
            _row("m_2", ["fact_2"]),
            _row("m_3", ["rec_9"]),
            _row("m_gone", ["rec_1"], status="withdrawn"),
        ]
    )
    named = {"records": ["rec_1", "rec_2"], "facts": ["fact_1", "fact_2"], "documents": []}
    expected = {"records": 1, "facts": 2, "documents": 0}

    for source_index in (False, True):
        rows = MemoryRows(mongo_db, source_index=source_index)
        assert await rows.count_derived_from("tnt_a", named, LIVE) == expected
        assert await rows.count_derived_from("tnt_b", named, LIVE) == dict.fromkeys(named, 0)
