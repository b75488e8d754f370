"""Writes over the real broker: validation before embedding, idempotent retries, retention, deletes."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.integration.memory.conftest import MemoryStack, new_agent, topic, wait_status, write
from tests.support.kafka import read_all, wait_for


@pytest.mark.parametrize("content", ["", "   ", "\n\t "])
async def test_empty_or_whitespace_is_refused_at_the_door_and_never_queued(
    stack: MemoryStack, content: str
) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        refused = client.post(f"/v1/agents/{agent}/memories", json={"content": content})
        fine = write(client, agent, "a valid memory written after the empty one")
        wait_status(client, agent, fine, {"active"})
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["type"] in {"empty", "whitespace"}
    bootstrap = stack.env["KAFKA_BOOTSTRAP_SERVERS"]
    writes = await read_all(bootstrap, topic(stack, "engram.memories.v1"))
    requested = [m for m in writes if m and m["event_type"] == "memory.write_requested"]
    assert [m["payload"]["memory_id"] for m in requested] == [fine]


async def test_a_retried_post_with_an_idempotency_key_is_one_memory(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        body = {"content": "retry me once", "idempotency_key": "req-42"}
        first = client.post(f"/v1/agents/{agent}/memories", json=body).json()
        second = client.post(f"/v1/agents/{agent}/memories", json=body).json()
        assert first["memory_id"] == second["memory_id"]
        assert first["status_url"] == f"/v1/agents/{agent}/memories/{first['memory_id']}"
        wait_status(client, agent, first["memory_id"], {"active"})
        listed = client.get(f"/v1/agents/{agent}/memories").json()["memories"]
    assert [m["memory_id"] for m in listed] == [first["memory_id"]]
    stored = await wait_for(
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.memory-outcomes.v1"),
        lambda m: m.get("event_type") == "memory.stored",
    )
    assert len(stored) == 1


async def test_retention_counts_and_evicts_only_its_own_type(
    start_stack: Callable[..., MemoryStack],
) -> None:
    policy = [{"type": "scratch", "max_count": 3}]
    stack = start_stack(ENGRAM_MEMORY_RETENTION=json.dumps(policy))
    with stack.client(stack.tenant()) as client:
        agent, other = new_agent(client), new_agent(client)
        scratch = []
        for n in range(5):
            scratch.append(write(client, agent, f"scratch note number {n}", type="scratch"))
            wait_status(client, agent, scratch[-1], {"active"})
        notes = [write(client, agent, f"durable note {n}", type="note") for n in range(4)]
        others = [
            write(client, other, f"other agent scratch {n}", type="scratch") for n in range(2)
        ]
        for memory_id in notes:
            wait_status(client, agent, memory_id, {"active"})
        for memory_id in others:
            wait_status(client, other, memory_id, {"active"})

        def listed(agent_id: str, **params: str) -> list[str]:
            found = client.get(f"/v1/agents/{agent_id}/memories", params=params).json()
            return [m["memory_id"] for m in found["memories"]]

        assert listed(agent, type="scratch", status="active") == scratch[2:]
        assert listed(agent, type="scratch", status="withdrawn") == scratch[:2]
        assert sorted(listed(agent, type="note", status="active")) == sorted(notes)
        assert sorted(listed(other, type="scratch", status="active")) == sorted(others)
        evicted = client.get(f"/v1/agents/{agent}/memories/{scratch[0]}").json()
        assert evicted["withdrawn_reason"] == "retention" and "content" not in evicted
        assert evicted["content_sha256"]
        recalled = client.post(
            f"/v1/agents/{agent}/recall", json={"query": "scratch note number 0", "min_score": -1}
        ).json()
        assert scratch[0] not in {r["memory_id"] for r in recalled["results"]}
    withdrawn = await wait_for(
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.memory-outcomes.v1"),
        lambda m: m.get("event_type") == "memory.withdrawn",
        count=2,
    )
    assert sorted(m["payload"]["memory_id"] for m in withdrawn) == sorted(scratch[:2])
    assert {m["payload"]["reason"] for m in withdrawn} == {"retention"}


async def test_delete_one_and_clear_an_agent(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        ids = [write(client, agent, f"memory to delete {n}") for n in range(3)]
        for memory_id in ids:
            wait_status(client, agent, memory_id, {"active"})
        deleted = client.delete(f"/v1/agents/{agent}/memories/{ids[0]}")
        assert deleted.status_code == 200 and deleted.json()["status"] == "withdrawn"
        gone = client.get(f"/v1/agents/{agent}/memories/{ids[0]}").json()
        assert gone["status"] == "withdrawn" and "content" not in gone
        cleared = client.delete(f"/v1/agents/{agent}/memories")
        assert cleared.json()["withdrawn"] == 2
        recalled = client.post(
            f"/v1/agents/{agent}/recall", json={"query": "memory to delete", "min_score": -1}
        ).json()
        assert recalled["results"] == []
        statuses = {
            m["status"] for m in client.get(f"/v1/agents/{agent}/memories").json()["memories"]
        }
        assert statuses == {"withdrawn"}
    withdrawn = await wait_for(
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.memory-outcomes.v1"),
        lambda m: m.get("event_type") == "memory.withdrawn",
        count=3,
    )
    assert {m["payload"]["reason"] for m in withdrawn} == {"deleted"}


async def test_deleting_an_agent_withdraws_its_memories(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent, other = new_agent(client), new_agent(client)
        mine = write(client, agent, "belongs to the agent being deleted")
        theirs = write(client, other, "belongs to the agent that stays")
        wait_status(client, agent, mine, {"active"})
        wait_status(client, other, theirs, {"active"})
        assert client.delete(f"/v1/agents/{agent}").status_code == 204
        assert client.get(f"/v1/agents/{agent}/memories/{mine}").status_code == 404
        assert client.get(f"/v1/agents/{other}/memories/{theirs}").json()["status"] == "active"
    [withdrawn] = await wait_for(
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.memory-outcomes.v1"),
        lambda m: m.get("event_type") == "memory.withdrawn",
    )
    assert withdrawn["payload"]["memory_id"] == mine
    assert withdrawn["payload"]["reason"] == "agent_deleted"


async def test_a_backlog_of_writes_is_stored_once_each_through_the_batch_routes(
    stack: MemoryStack,
) -> None:
    """Writes queued while memory is down (the gateway cannot ask it about duplicates, and
    queues them anyway) arrive as full batches (100 per delivery): each is stored exactly
    once."""
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        stack.memory.stop()
        ids = [write(client, agent, f"backlog memory number {n}") for n in range(150)]
        stack.memory.start()
        for memory_id in (ids[0], ids[-1]):
            wait_status(client, agent, memory_id, {"active"}, timeout=120)
        listed = client.get(f"/v1/agents/{agent}/memories", params={"limit": 500}).json()
    assert sorted(m["memory_id"] for m in listed["memories"] if m["status"] == "active") == sorted(
        ids
    )
    stored = await wait_for(
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.memory-outcomes.v1"),
        lambda m: m.get("event_type") == "memory.stored",
        count=150,
        timeout=60,
    )
    assert sorted(m["payload"]["memory_id"] for m in stored) == sorted(ids)
