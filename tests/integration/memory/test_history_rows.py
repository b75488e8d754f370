"""A memory's history over the real database: back by `supersedes`, forward by `superseded_by`,
and a newer version still pending found by its `supersedes` on the agent's listing index."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from engram_memory.adapters.rows import MemoryRows
from engram_memory.service.history import History

T = "tnt_a"
START = datetime(2026, 1, 1, tzinfo=UTC)


def _row(n: int, status: str, agent: str = "agt_1", **links: Any) -> dict[str, Any]:
    return {
        "_id": f"{T}:mem_{n}",
        "tenant_id": T,
        "memory_id": f"mem_{n}",
        "agent_id": agent,
        "status": status,
        "type": "fact",
        "content": f"version {n}",
        "content_sha256": "0" * 64,
        "metadata": {},
        "author": {"key_id": "key_1", "role": "admin"},
        "created_at": START + timedelta(seconds=n),
        **links,
    }


async def test_the_chain_is_found_from_any_version_with_a_pending_head(mongo_db: Any) -> None:
    await mongo_db.memories.insert_many(
        [
            _row(1, "superseded", superseded_by="mem_2"),
            _row(2, "active", supersedes="mem_1"),
            _row(3, "pending", supersedes="mem_2", edit_reason="typo"),
            _row(4, "active", agent="agt_2", supersedes="mem_3"),
            _row(5, "active"),
        ]
    )
    history = History(MemoryRows(mongo_db))
    for start in ("mem_1", "mem_2", "mem_3"):
        versions = await history.versions(T, "agt_1", start)
        assert versions is not None
        assert [v["memory_id"] for v in versions] == ["mem_1", "mem_2", "mem_3"]
    newest = (await history.versions(T, "agt_1", "mem_3") or [])[-1]
    assert newest["edit_reason"] == "typo" and newest["author"]["key_id"] == "key_1"
    alone = await history.versions(T, "agt_1", "mem_5")
    assert alone is not None and [v["memory_id"] for v in alone] == ["mem_5"]
    assert await history.versions("tnt_b", "agt_1", "mem_1") is None
