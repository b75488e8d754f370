"""Hybrid recall over the real broker and database, with MiniLM (and bge-small): identifiers
that dense vectors lose are found, and the floor never drops an exact identifier match."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.integration.memory.conftest import MemoryStack, new_agent
from tests.support.polling import until

CITIES = ["Gdansk", "Rotterdam", "Hamburg", "Antwerp", "Le Havre", "Valencia", "Genoa", "Piraeus"]
CUSTOMERS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell"]
TARGET = "ORD-48213"


def similar_orders(count: int, seed: int = 7) -> list[str]:
    """Order memories that differ only in their codes, customers and ports."""
    rng = random.Random(seed)
    codes = rng.sample(range(40_000, 60_000), count + 1)
    return [  # distinct codes, so no two contents are duplicates
        f"Order ORD-{code} for {rng.choice(CUSTOMERS)} was delayed at customs in "
        f"{rng.choice(CITIES)} and will ship next week."
        for code in codes
        if f"ORD-{code}" != TARGET
    ][:count]


def write_all(client: httpx.Client, agent: str, contents: list[str]) -> list[str]:
    """Write through `:batch`, 100 at a time; returns the memory ids in order."""
    ids: list[str] = []
    for start in range(0, len(contents), 100):
        chunk = [{"content": c} for c in contents[start : start + 100]]
        answer = client.post(f"/v1/agents/{agent}/memories:batch", json={"memories": chunk})
        assert answer.status_code == 202, answer.text
        ids += [m["memory_id"] for m in answer.json()["memories"]]
    return ids


def wait_active(client: httpx.Client, agent: str, expected: int, timeout: float = 180) -> None:
    """Poll the count until `expected` memories of the agent are active."""
    until(
        lambda: client.get(f"/v1/agents/{agent}/memories:count").json(),
        f"{expected} active memories",
        timeout,
        ready=lambda counted: counted.get("by_status", {}).get("active", 0) >= expected,
    )


def recall(client: httpx.Client, agent: str, query: str, **options: Any) -> dict[str, Any]:
    answer = client.post(f"/v1/agents/{agent}/recall", json={"query": query, **options})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


@pytest.fixture
def minilm(start_stack: Callable[..., MemoryStack]) -> MemoryStack:
    """The memory stack with the real model, as users run it."""
    return start_stack(ENGRAM_EMBEDDING_EMBEDDER="minilm", ENGRAM_MEMORY_EMBEDDER="minilm")


def test_an_identifier_dense_misses_among_500_similar_is_first_under_hybrid(
    minilm: MemoryStack,
) -> None:
    target = f"Order {TARGET} for Acme was delayed at customs in Gdansk and will ship next week."
    with minilm.client(minilm.tenant()) as client:
        agent = new_agent(client)
        others = similar_orders(499)
        contents = [*others[:250], target, *others[250:]]
        ids = write_all(client, agent, contents)
        wait_active(client, agent, len(contents))
        wanted = ids[250]
        query = f"what happened with order {TARGET}?"
        dense = recall(client, agent, query, mode="dense", top_k=5)
        hybrid = recall(client, agent, query, top_k=5)
        lexical = recall(client, agent, query, mode="lexical", top_k=5)
    assert [r["memory_id"] for r in dense["results"]][:1] != [wanted], (
        "the premise: dense retrieval alone does not put the identifier first"
    )
    assert hybrid["mode"] == "hybrid"
    assert hybrid["results"][0]["memory_id"] == wanted
    assert lexical["results"][0]["memory_id"] == wanted
    first = hybrid["results"][0]
    assert set(first["scores"]) == {"dense", "lexical", "fused"}
    assert first["scores"]["lexical"] > 0 and first["score"] == first["scores"]["dense"]
    assert all(r["scores"]["lexical"] < first["scores"]["lexical"] for r in hybrid["results"][1:])


def test_the_floor_keeps_an_exact_identifier_and_still_drops_the_unrelated(
    minilm: MemoryStack,
) -> None:
    _floor_keeps_identifiers_and_drops_the_unrelated(minilm, 0.25)


def test_bge_small_answers_by_meaning_and_drops_the_unrelated_at_its_floor(
    start_stack: Callable[..., MemoryStack],
) -> None:
    """bge-small end to end: documents embedded by the embedding service, the query with the
    instruction by the memory service, and its own default floor."""
    bge = start_stack(ENGRAM_EMBEDDING_EMBEDDER="bge-small", ENGRAM_MEMORY_EMBEDDER="bge-small")
    _floor_keeps_identifiers_and_drops_the_unrelated(bge, 0.48)
    with bge.client(bge.tenant()) as client:
        agent = new_agent(client)
        ids = write_all(client, agent, ["The Rotterdam warehouse closes at 14:00 on weekdays."])
        wait_active(client, agent, 1)
        found = recall(client, agent, "when does the depot in the Netherlands shut?", mode="dense")
    assert [r["memory_id"] for r in found["results"]] == ids
    assert found["results"][0]["provenance"]["model_id"] == "BAAI/bge-small-en-v1.5"


def _floor_keeps_identifiers_and_drops_the_unrelated(stack: MemoryStack, floor: float) -> list[str]:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        contents = [
            "Invoice INV-2026-0042 from Globex was paid twice by mistake.",
            "The Rotterdam warehouse closes at 14:00 on weekdays.",
            "jane.doe@example.com asked for the quarterly report in PDF.",
        ]
        ids = write_all(client, agent, contents)
        wait_active(client, agent, len(contents))
        exact = recall(client, agent, "INV-2026-0042", min_score=0.99)
        email = recall(client, agent, "contact jane.doe@example.com", min_score=0.99)
        unrelated = recall(client, agent, "lattice gauge theory in four dimensions")
        unrelated_lexical = recall(client, agent, "lattice gauge theory", mode="lexical")
    assert [r["memory_id"] for r in exact["results"]] == [ids[0]]
    assert exact["results"][0]["score"] < 0.99 and exact["floor"] == 0.99
    assert [r["memory_id"] for r in email["results"]] == [ids[2]]
    assert unrelated["results"] == []
    assert unrelated["dropped_below_floor"] == 3 and unrelated["floor"] == floor
    assert unrelated_lexical["results"] == []
    return ids
