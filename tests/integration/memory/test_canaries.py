"""A full MiniLM run: logs and spans of every process carry no memory or query content."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pymongo import MongoClient

from engram_embedders import MiniLMEmbedder
from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write
from tests.support.polling import until
from tests.support.spans import stored_spans

CANARIES = [
    "CANARY-5f1c-content the user hides a spare key under the blue flowerpot",
    "CANARY-8a2e-content the launch codename is Marmalade Falcon",
]
BATCH_CANARY = "CANARY-e41b-batch the vault opens with the word Quince"
"""Written by `:batch`, so content also reaches the embedding service (single writes are
embedded in memory's own pass)."""
QUERY_CANARY = "CANARY-77d0-query where is the spare key hidden"
SEARCH_CANARY = "CANARY-5f1c"
TOO_LONG = "CANARY-c3b9-rejected " + "x" * 400


def _spans(stack: MemoryStack) -> list[dict[str, Any]]:
    """Every span the processes exported to the local telemetry database."""
    db = MongoClient[dict[str, Any]](stack.env["MONGODB_URI"])[
        f"{stack.env['ENGRAM_DATABASE_PREFIX']}telemetry"
    ]
    return stored_spans(db.spans)


def test_no_canary_reaches_logs_or_spans(start_stack: Callable[..., MemoryStack]) -> None:
    stack = start_stack(
        ENGRAM_EMBEDDING_EMBEDDER="minilm",
        ENGRAM_MEMORY_EMBEDDER="minilm",
        ENGRAM_MEMORY_MAX_CONTENT_CHARS="200",
        ENGRAM_LOG_LEVEL="DEBUG",
    )
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        ids = [write(client, agent, canary) for canary in CANARIES]
        batch = {"memories": [{"content": BATCH_CANARY}]}
        batched = client.post(f"/v1/agents/{agent}/memories:batch", json=batch)
        assert batched.status_code == 202
        ids_batched = [m["memory_id"] for m in batched.json()["memories"]]
        refused = client.post(f"/v1/agents/{agent}/memories", json={"content": TOO_LONG})
        assert refused.status_code == 422 and refused.json()["errors"][0]["type"] == "too_long"
        assert "CANARY" not in refused.text
        rows = [wait_status(client, agent, m, {"active"}) for m in [*ids, *ids_batched]]
        recalled = client.post(f"/v1/agents/{agent}/recall", json={"query": QUERY_CANARY})
        assert recalled.status_code == 200
        assert recalled.json()["results"][0]["memory_id"] == ids[0]
        found = client.get(f"/v1/agents/{agent}/memories", params={"search": SEARCH_CANARY})
        assert [m["memory_id"] for m in found.json()["memories"]] == ids[:1]
        assert client.delete(f"/v1/agents/{agent}/memories/{ids[1]}").status_code == 200
    expected = MiniLMEmbedder().provenance
    assert rows[0]["provenance"] == {**expected.model_dump(), "fingerprint": expected.fingerprint}
    for process in stack.processes():
        process.stop()
    spans = until(
        lambda: _spans(stack),
        "the spans of gateway, memory and embedding flushed",
        10,
        ready=lambda spans: (
            {"engram-gateway", "engram-memory", "engram-embedding"} <= {s["service"] for s in spans}
        ),
    )
    assert {"engram-gateway", "engram-memory", "engram-embedding"} <= {s["service"] for s in spans}
    captured = {p.name: p.logs() for p in stack.processes()}
    captured["spans"] = json.dumps(spans, default=str)
    assert all(captured.values())
    for where, text in captured.items():
        words = ["Marmalade", "Quince"]
        for canary in [*CANARIES, BATCH_CANARY, QUERY_CANARY, SEARCH_CANARY, TOO_LONG[:30], *words]:
            assert canary not in text, f"{where} leaked content"
