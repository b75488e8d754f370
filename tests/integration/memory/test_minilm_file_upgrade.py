"""A store written with MiniLM's wheel file (the default before the quantized one) keeps
answering after the services restart on today's default: recall reads it in its own space, and
a new write (a `:batch` one, embedded with the quantized file by the embedding service) is
embedded again in the store's space before it is stored (no mixed spaces, no 409); then a
reindex to `minilm` moves the store to the quantized file."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from engram_embedders import MiniLMEmbedder
from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write
from tests.integration.ops.support import create_ops_tenant
from tests.support.models import model_dir
from tests.support.polling import until

MINILM = {"ENGRAM_EMBEDDING_EMBEDDER": "minilm", "ENGRAM_MEMORY_EMBEDDER": "minilm"}


def files(file: str) -> dict[str, str]:
    return {"ENGRAM_EMBEDDING_MINILM_FILE": file, "ENGRAM_MEMORY_MINILM_FILE": file}


def top_hit(client: httpx.Client, agent: str, query: str) -> dict[str, Any] | None:
    """The first hit of a recall, or None while the restarted services cannot answer."""
    answer = client.post(f"/v1/agents/{agent}/recall", json={"query": query, "top_k": 3})
    if answer.status_code != 200:
        return None
    results: list[dict[str, Any]] = answer.json()["results"]
    return results[0] if results else None


def test_a_store_of_the_wheels_file_answers_after_the_default_file_changed(
    start_stack: Callable[..., MemoryStack],
) -> None:
    wheel = MiniLMEmbedder(file="wheel").provenance.fingerprint
    quantized = MiniLMEmbedder(file="quantized", model_dir=model_dir()).provenance.fingerprint
    stack = start_stack(**MINILM, **files("wheel"))
    with stack.client(create_ops_tenant(stack.gateway.env, "upgraders")) as client:
        agent = new_agent(client)
        boat = write(client, agent, "The lighthouse keeper's boat is painted green.")
        wait_status(client, agent, boat, {"active"})
        first = top_hit(client, agent, "what colour is the keeper's boat?")
        assert first is not None and first["provenance"]["fingerprint"] == wheel

        for process in (stack.embedding, stack.memory):
            process.stop()
        for process in (stack.embedding, stack.memory):
            process.start(files("quantized"))
        hit = until(
            lambda: top_hit(client, agent, "what colour is the keeper's boat?"),
            "recall through the restarted services",
            60,
            0.2,
        )
        assert hit["memory_id"] == boat, "the old store answers, not a 409 embedder-mismatch"
        assert hit["provenance"]["fingerprint"] == wheel

        body = {"memories": [{"content": "The harbour ferry leaves at noon on Sundays."}]}
        batch = client.post(f"/v1/agents/{agent}/memories:batch", json=body)
        assert batch.status_code == 202, batch.text
        ferry = batch.json()["memories"][0]["memory_id"]
        wait_status(client, agent, ferry, {"active"})
        later = top_hit(client, agent, "when does the harbour ferry leave?")
        assert later is not None and later["memory_id"] == ferry
        assert later["provenance"]["fingerprint"] == wheel != quantized, (
            "a new write lands in the store's space, embedded again there"
        )

        started = client.post("/v1/ops/reindex", json={"embedder": "minilm", "stores": ["memory"]})
        assert started.status_code == 202, started.text
        until(
            lambda: client.get("/v1/ops/reindex").json()["stores"]["memory"]["state"] == "done",
            "the move to the quantized file",
            120,
            0.5,
        )
        moved = top_hit(client, agent, "what colour is the keeper's boat?")
        assert moved is not None and moved["memory_id"] == boat
        assert moved["provenance"]["fingerprint"] == quantized
