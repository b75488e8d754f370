"""A reindex over the real broker and database: memories move from hashing-384 to hashing-128
while recall keeps answering from the old collection, a write during the move and a memory
restart mid-move are carried over, and after the switch recall reads (and writes land in) the
new space only."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write
from tests.support.polling import until

MEMORIES = 60
TOPICS = ("lighthouse", "harbour", "orchard", "glacier", "volcano", "meadow")


def ops_key(stack: MemoryStack) -> str:
    """A tenant key with the ops role, which also calls the data API of its own tenant."""
    out = subprocess.run(
        [sys.executable, "-m", "engram_gateway", "create-tenant", "movers", "--ops"],
        env={**os.environ, **stack.gateway.env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return out.stdout.strip().splitlines()[-1]


def recall(client: httpx.Client, agent: str, query: str) -> list[dict[str, Any]]:
    """Recall must answer, and never empty: every memory is about one of the topics."""
    answer = client.post(
        f"/v1/agents/{agent}/recall", json={"query": query, "top_k": 5, "min_score": -1.0}
    )
    assert answer.status_code == 200, answer.text
    results: list[dict[str, Any]] = answer.json()["results"]
    assert results, f"an empty answer for {query!r}"
    return results


def answers(client: httpx.Client, agent: str) -> bool:
    """Whether recall answers at all (the gateway reconnects to a restarted memory service)."""
    body = {"query": "visit", "top_k": 1, "min_score": -1.0}
    return client.post(f"/v1/agents/{agent}/recall", json=body).status_code == 200


def progress(client: httpx.Client) -> dict[str, Any]:
    answer = client.get("/v1/ops/reindex")
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_a_reindex_moves_recall_to_the_new_space_without_a_gap(
    start_stack: Callable[..., MemoryStack],
) -> None:
    stack = start_stack(
        ENGRAM_MEMORY_REINDEX_PAGE_SIZE="4", ENGRAM_MEMORY_REINDEX_PAUSE_SECONDS="0.5"
    )
    with stack.client(stack.tenant()) as admin:
        denied = admin.post("/v1/ops/reindex", json={"embedder": "bge-small"})
        assert denied.status_code == 403, "a tenant's admin key may not move every tenant's store"
    key = ops_key(stack)
    with stack.client(key) as client:
        agent = new_agent(client)
        written = [
            write(client, agent, f"note {n}: the {TOPICS[n % len(TOPICS)]} visit on day {n}")
            for n in range(MEMORIES)
        ]
        for memory_id in written:
            wait_status(client, agent, memory_id, {"active"})
        before = recall(client, agent, "the orchard visit")
        assert before[0]["provenance"]["dimension"] == 384

        refused = client.post("/v1/ops/reindex", json={"embedder": "hashing"})
        assert refused.status_code == 409, "hashing-384 is the space already in use"
        started = client.post(
            "/v1/ops/reindex", json={"embedder": "hashing", "hashing_dimension": 128}
        )
        assert started.status_code == 202, started.text
        assert started.json()["total"] == MEMORIES
        again = client.post(
            "/v1/ops/reindex", json={"embedder": "hashing", "hashing_dimension": 96}
        )
        assert again.status_code == 409

        during = write(client, agent, "the glacier hut code is 5521")
        wait_status(client, agent, during, {"active"})
        until(lambda: progress(client)["done"] >= 8, "a part of the walk", 30, 0.1)
        assert recall(client, agent, "glacier hut")[0]["provenance"]["dimension"] == 384

        stack.memory.stop()
        stack.memory.start()
        assert progress(client)["state"] == "running", "a restart resumes the move"
        until(lambda: answers(client, agent), "recall through the restarted service", 30, 0.2)

        answered = 0
        while progress(client)["state"] == "running":
            for topic in TOPICS:
                recall(client, agent, f"the {topic} visit")
                answered += 1
            time.sleep(0.05)
        done = progress(client)
        assert done["state"] == "done", done
        assert done["done"] >= MEMORIES and done["rate"] > 0
        assert answered > 0

        after = recall(client, agent, "the orchard visit")
        assert {hit["provenance"]["dimension"] for hit in after} == {128}
        assert "orchard" in after[0]["content"]
        hut = recall(client, agent, "glacier hut code")
        assert hut[0]["memory_id"] == during

        later = write(client, agent, "the volcano ferry leaves at noon")
        wait_status(client, agent, later, {"active"})
        ferry = recall(client, agent, "volcano ferry noon")
        assert ferry[0]["memory_id"] == later
        assert ferry[0]["provenance"]["dimension"] == 128

        stack.memory.stop()
        stack.memory.start()
        assert progress(client)["state"] == "done"
        until(lambda: answers(client, agent), "recall through the restarted service", 30, 0.2)
        restarted = recall(client, agent, "volcano ferry noon")
        assert restarted[0]["provenance"]["dimension"] == 128, "the switch outlives a restart"
