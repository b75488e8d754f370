"""Expiry over the real broker and database: a memory written with `ttl_seconds` is recalled
until it lapses, then leaves recall and listings at once, is listed `expired`, keeps its row
(content included) for audit, and the sweeper removes its point."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

from engram_memory.adapters.vectors import KEYWORD_INDEXES
from engram_vectors import vector_store_from
from tests.integration.memory.conftest import MemoryStack, new_agent, topic, wait_status, write
from tests.support.kafka import wait_for
from tests.support.polling import until

TTL = 10
"""Long enough to be stored and recalled first on a busy machine, short enough to wait out."""


def recalled(client: httpx.Client, agent: str, query: str) -> list[str]:
    answer = client.post(
        f"/v1/agents/{agent}/recall", json={"query": query, "top_k": 10, "min_score": -1.0}
    )
    assert answer.status_code == 200, answer.text
    return [hit["memory_id"] for hit in answer.json()["results"]]


def listed(client: httpx.Client, agent: str, **params: str) -> list[str]:
    answer = client.get(f"/v1/agents/{agent}/memories", params=params)
    assert answer.status_code == 200, answer.text
    return [m["memory_id"] for m in answer.json()["memories"]]


async def points_of(stack: MemoryStack, tmp_tenant: str, memory_ids: list[str]) -> list[int]:
    """How many points each memory has, read from the vector store once memory has stopped."""
    store = vector_store_from(
        stack.env.get("QDRANT_URL"),
        stack.env["ENGRAM_MEMORY_VECTOR_PATH"],
        keyword_indexes=KEYWORD_INDEXES,
    )
    collection = stack.env.get("ENGRAM_MEMORY_COLLECTION", "memories")
    try:
        return [
            await store.count(collection, {"tenant_id": tmp_tenant, "memory_id": m})
            for m in memory_ids
        ]
    finally:
        await store.close()


async def test_a_memory_with_a_ttl_leaves_recall_and_listings_and_is_listed_expired(
    start_stack: Callable[..., MemoryStack],
) -> None:
    stack = start_stack(ENGRAM_MEMORY_EXPIRY_SWEEP_SECONDS="1")
    key = stack.tenant()
    with stack.client(key) as client:
        agent = new_agent(client)
        brief = write(client, agent, "the locker code is 4417 for today", ttl_seconds=TTL)
        kept = write(client, agent, "the locker code is kept at the front desk")
        shown = wait_status(client, agent, brief, {"active"})
        wait_status(client, agent, kept, {"active"})
        assert shown["expires_at"]
        expires_at = datetime.fromisoformat(shown["expires_at"])
        assert brief in recalled(client, agent, "locker code")
        assert datetime.now(UTC) < expires_at, "recalled before it lapsed"

        until(
            lambda: brief not in recalled(client, agent, "locker code"),
            "the lapsed memory to leave recall",
            timeout=TTL + 30,
        )
        assert datetime.now(UTC) >= expires_at
        assert kept in recalled(client, agent, "locker code")
        assert listed(client, agent, status="active") == [kept]
        assert listed(client, agent, status="expired") == [brief]
        count = client.get(f"/v1/agents/{agent}/memories:count").json()
        assert count["by_status"] == {"active": 1, "expired": 1}

        def swept() -> dict[str, Any] | None:
            row: dict[str, Any] = client.get(f"/v1/agents/{agent}/memories/{brief}").json()
            return row if row.get("expired_at") else None

        edit = client.patch(f"/v1/agents/{agent}/memories/{brief}", json={"content": "4418"})
        assert edit.status_code == 409 and edit.json()["memory_status"] == "expired", edit.text
        again = client.post(
            f"/v1/agents/{agent}/memories", json={"content": "the locker code is 4417 for today"}
        )
        assert again.status_code == 202 and again.json()["memory_id"] != brief, again.text

        row = until(swept, "the sweeper to mark the memory expired", timeout=60)
        assert row["status"] == "expired"
        assert row["content"] == "the locker code is 4417 for today"
        assert brief not in recalled(client, agent, "locker code")
        assert listed(client, agent, status="expired") == [brief]
        wait_status(client, agent, again.json()["memory_id"], {"active"})

    withdrawn = await wait_for(
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.memory-outcomes.v1"),
        lambda m: m.get("event_type") == "memory.withdrawn",
    )
    assert [(m["payload"]["memory_id"], m["payload"]["reason"]) for m in withdrawn] == [
        (brief, "expired")
    ]
    tenant_id = withdrawn[0]["tenant_id"]
    stack.memory.stop()
    assert await points_of(stack, tenant_id, [brief, kept]) == [0, 1]


def test_bad_expiries_are_refused_naming_the_field(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        path = f"/v1/agents/{agent}/memories"
        bodies = [
            {"content": "x", "ttl_seconds": 0},
            {"content": "x", "ttl_seconds": "soon"},
            {"content": "x", "ttl_seconds": 5, "expires_at": "2999-01-01T00:00:00Z"},
            {"content": "x", "expires_at": "2020-01-01T00:00:00Z"},
            {"content": "x", "expires_at": "2030-01-01T00:00:00"},
            {"content": "x", "ttl": 5},
        ]
        answers = [client.post(path, json=body) for body in bodies]
        batch = client.post(
            f"{path}:batch",
            json={"memories": [{"content": "fine"}, {"content": "x", "ttl_seconds": -1}]},
        )
        listed_now = listed(client, agent)
    assert [a.status_code for a in answers] == [422] * len(bodies), [a.text for a in answers]
    assert "ttl_seconds" in answers[0].text and "ttl_seconds" in answers[1].text
    assert "not both" in answers[2].text
    assert "in the future" in answers[3].text
    assert "timezone" in answers[4].text
    assert "ttl" in answers[5].text
    assert batch.status_code == 422 and "ttl_seconds" in batch.text
    assert listed_now == []


def test_a_batch_item_and_an_edit_carry_their_expiry_to_the_row(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        batch = client.post(
            f"/v1/agents/{agent}/memories:batch",
            json={"memories": [{"content": "expires in an hour", "ttl_seconds": 3600}]},
        )
        assert batch.status_code == 202, batch.text
        [item] = batch.json()["memories"]
        stored = wait_status(client, agent, item["memory_id"], {"active"})
        plain = write(client, agent, "never expires")
        wait_status(client, agent, plain, {"active"})
        edit = client.patch(f"/v1/agents/{agent}/memories/{plain}", json={"ttl_seconds": 7200})
        assert edit.status_code == 202, edit.text
        edited = wait_status(client, agent, edit.json()["memory_id"], {"active"})
        old = client.get(f"/v1/agents/{agent}/memories/{plain}").json()
    hour = datetime.fromisoformat(stored["expires_at"]) - datetime.now(UTC)
    two_hours = datetime.fromisoformat(edited["expires_at"]) - datetime.now(UTC)
    assert 3000 < hour.total_seconds() <= 3600
    assert 6600 < two_hours.total_seconds() <= 7200
    assert edited["content"] == "never expires"
    assert old["status"] == "superseded" and "expires_at" not in old
