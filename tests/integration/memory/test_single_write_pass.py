"""A single write over the real broker is embedded and stored in memory's first pass (no
request to the embedding service); switched off, it goes through the embedding service."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engram_embedders import HashingEmbedder
from tests.integration.memory.conftest import MemoryStack, new_agent, topic, wait_status, write
from tests.support.kafka import read_all, wait_for


def requested_items(messages: list[dict[str, Any] | None]) -> set[str]:
    """The item ids of every `embedding.requested` among the messages."""
    return {
        item["item_id"]
        for m in messages
        if m and m["event_type"] == "embedding.requested"
        for item in m["payload"]["items"]
    }


async def test_a_single_write_is_stored_without_asking_the_embedding_service(
    stack: MemoryStack,
) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        memory_id = write(client, agent, "the warehouse opens at seven on weekdays")
        row = wait_status(client, agent, memory_id, {"active"})
        found = client.post(f"/v1/agents/{agent}/recall", json={"query": "when does it open"})
    assert [r["memory_id"] for r in found.json()["results"]] == [memory_id]
    expected = HashingEmbedder(dimension=384).provenance
    assert row["provenance"]["fingerprint"] == expected.fingerprint
    bootstrap = stack.env["KAFKA_BOOTSTRAP_SERVERS"]
    [stored] = await wait_for(
        bootstrap,
        topic(stack, "engram.memory-outcomes.v1"),
        lambda m: m.get("event_type") == "memory.stored" and m["payload"]["memory_id"] == memory_id,
    )
    assert stored["payload"]["provenance"]["fingerprint"] == expected.fingerprint
    asked = requested_items(await read_all(bootstrap, topic(stack, "engram.embeddings.v1")))
    assert memory_id not in asked


async def test_switched_off_a_single_write_goes_through_the_embedding_service(
    start_stack: Callable[..., MemoryStack],
) -> None:
    stack = start_stack(ENGRAM_MEMORY_EMBED_SINGLE_WRITES="false")
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        memory_id = write(client, agent, "the warehouse opens at seven on weekdays")
        wait_status(client, agent, memory_id, {"active"})
    bootstrap = stack.env["KAFKA_BOOTSTRAP_SERVERS"]
    asked = requested_items(await read_all(bootstrap, topic(stack, "engram.embeddings.v1")))
    assert memory_id in asked
