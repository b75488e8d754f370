"""Recall over the real broker and database: the floor is applied, provenance is the embedder's."""

from __future__ import annotations

from collections.abc import Callable

from engram_embedders import HashingEmbedder
from tests.integration.memory.conftest import MemoryStack, new_agent, topic, wait_status, write
from tests.support.kafka import wait_for

PROBLEM = "application/problem+json"


async def test_a_below_floor_hit_never_returns_and_is_counted(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        near = write(client, agent, "the apple pie recipe uses cinnamon and butter")
        far = write(client, agent, "quarterly tax filing deadline for the Lisbon office")
        for memory_id in (near, far):
            wait_status(client, agent, memory_id, {"active"})
        query = {"query": "apple pie with cinnamon", "top_k": 5}
        raw = client.post(f"/v1/agents/{agent}/recall", json={**query, "min_score": -1.0}).json()
        scores = {r["memory_id"]: r["score"] for r in raw["results"]}
        assert set(scores) == {near, far} and raw["dropped_below_floor"] == 0
        floor = (scores[near] + scores[far]) / 2
        floored = client.post(f"/v1/agents/{agent}/recall", json={**query, "min_score": floor})
        body = floored.json()
        assert floored.status_code == 200
        assert [r["memory_id"] for r in body["results"]] == [near]
        assert body["floor"] == floor and body["dropped_below_floor"] == 1
        assert all(r["score"] >= floor for r in body["results"])
        default = client.post(f"/v1/agents/{agent}/recall", json=query).json()
        assert default["floor"] == 0.05
        assert all(r["score"] >= 0.05 for r in default["results"])
        assert len(default["results"]) + default["dropped_below_floor"] == 2


async def test_stored_provenance_is_what_the_embedder_returned(stack: MemoryStack) -> None:
    expected = HashingEmbedder(dimension=384).provenance
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        memory_id = write(client, agent, "provenance should describe the real embedder")
        row = wait_status(client, agent, memory_id, {"active"})
        recalled = client.post(
            f"/v1/agents/{agent}/recall", json={"query": "real embedder provenance"}
        ).json()
    want = {**expected.model_dump(), "fingerprint": expected.fingerprint}
    assert row["provenance"] == want
    assert recalled["results"][0]["provenance"] == want
    [stored] = await wait_for(
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.memory-outcomes.v1"),
        lambda m: m.get("event_type") == "memory.stored" and m["payload"]["memory_id"] == memory_id,
    )
    assert stored["payload"]["provenance"] == want


async def test_superseded_memories_return_only_when_asked(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        old = write(client, agent, "the team meets in room 4 on Mondays")
        wait_status(client, agent, old, {"active"})
        new = write(client, agent, "the team now meets in room 9 on Mondays", supersedes=old)
        wait_status(client, agent, new, {"active"})
        assert wait_status(client, agent, old, {"superseded"})["superseded_by"] == new
        query = {"query": "where does the team meet on Mondays", "min_score": -1.0}
        default = client.post(f"/v1/agents/{agent}/recall", json=query).json()
        assert [r["memory_id"] for r in default["results"]] == [new]
        both = client.post(
            f"/v1/agents/{agent}/recall",
            json={**query, "include_statuses": ["active", "superseded"]},
        ).json()
        assert {r["memory_id"] for r in both["results"]} == {old, new}


async def test_a_query_under_another_embedder_model_is_refused(
    start_stack: Callable[..., MemoryStack],
) -> None:
    stack = start_stack()
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        memory_id = write(client, agent, "stored under the 384-dimension hashing model")
        wait_status(client, agent, memory_id, {"active"})
        stack.memory.stop()
        stack.memory.start(extra_env={"ENGRAM_MEMORY_HASHING_DIMENSION": "256"})
        refused = client.post(f"/v1/agents/{agent}/recall", json={"query": "hashing model"})
    assert refused.status_code == 409
    assert refused.headers["content-type"].startswith(PROBLEM)
    body = refused.json()
    assert body["type"] == "/problems/embedder-mismatch"
    assert body["collection_fingerprint"] == HashingEmbedder(384).provenance.fingerprint
    assert body["query_fingerprint"] == HashingEmbedder(256).provenance.fingerprint
