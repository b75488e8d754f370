"""Memories through the typed client: write with a key, wait, read, list, recall, withdraw."""

from __future__ import annotations

import pytest

from engram_client import AsyncEngramClient, EngramClient, NotFound
from tests.integration.client.conftest import Stack


def test_memory_lifecycle_through_the_client(memory_stack: Stack) -> None:
    with EngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = client.create_agent("support")
        first = client.write_memory(
            agent.agent_id,
            "The carrier Acme prefers email over phone",
            type="fact",
            metadata={"topic": "contact"},
            idempotency_key="note-1",
        )
        again = client.write_memory(
            agent.agent_id,
            "The carrier Acme prefers email over phone",
            type="fact",
            metadata={"topic": "contact"},
            idempotency_key="note-1",
        )
        assert again.memory_id == first.memory_id, "one key, one memory"
        second = client.write_memory(agent.agent_id, "Beta Lines ships on Fridays")

        statuses: list[str] = []
        stored = client.wait_for_memory(
            agent.agent_id, first.memory_id, 60, on_progress=lambda m: statuses.append(m.status)
        )
        assert stored.status == "active" and stored.type == "fact"
        assert client.wait_for_memory(agent.agent_id, second.memory_id, 60).status == "active"

        listed = client.list_memories(agent.agent_id, type="fact")
        assert [m.memory_id for m in listed.memories] == [first.memory_id]
        across = [m.memory_id for m in client.iter_memories(search="Fridays")]
        assert across == [second.memory_id]

        recalled = client.recall(agent.agent_id, "The carrier Acme prefers email over phone")
        assert recalled.results and recalled.results[0].memory_id == first.memory_id
        floored = client.recall(agent.agent_id, "Acme email", min_score=0.999)
        assert all(hit.score >= 0.999 for hit in floored.results)

        withdrawn = client.delete_memory(agent.agent_id, first.memory_id)
        assert withdrawn.status == "withdrawn"
        cleared = client.clear_memories(agent.agent_id)
        assert cleared.agent_id == agent.agent_id
        with pytest.raises(NotFound):
            client.get_memory(agent.agent_id, "mem_unknown")


async def test_async_memory_write_and_wait(memory_stack: Stack) -> None:
    async with AsyncEngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = await client.create_agent("async")
        accepted = await client.write_memory(agent.agent_id, "Depot Lyon opens at six")
        memory = await client.wait_for_memory(agent.agent_id, accepted.memory_id, 60)
    assert memory.status == "active"
