"""Conversations turned into memories: conversations/s without a model (20-message
conversations, one memory per user and assistant message), and model calls per conversation
with a local stub model (one extraction, then one decision per fact that resembles a memory
the agent already holds).

Starts the embedding, memory and gateway services against the broker and database in
KAFKA_BOOTSTRAP_SERVERS / MONGODB_URI. Offline: posts N conversations of 20 messages (18 of
them user or assistant turns, all distinct) and times from the first POST until every memory
they asked for is active. With the stub: a conversation proposes 3 facts and every decision is
`add`; the conversations share one user, so every one after the first is decided against the
memories the earlier ones wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engram_devstack import free_port  # noqa: E402
from tests.support.llm_stub import LlmStub  # noqa: E402
from tests.support.polling import until  # noqa: E402
from tests.support.services import ServiceProcess  # noqa: E402
from tests.support.tenants import create_tenant  # noqa: E402

FACTS = [
    "The user lives in Riga.",
    "The user prefers aisle seats.",
    "The user travels with a bicycle.",
]


def start(root: Path, embedder: str, **extra: str) -> tuple[list[ServiceProcess], str]:
    """Embedding, memory and gateway on free ports with a unique prefix; the tenant's key."""
    tag = uuid.uuid4().hex[:10]
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": os.environ["KAFKA_BOOTSTRAP_SERVERS"],
        "MONGODB_URI": os.environ["MONGODB_URI"],
        "ENGRAM_TOPIC_PREFIX": f"b{tag}.",
        "ENGRAM_DATABASE_PREFIX": f"b{tag}_",
        "ENGRAM_TOPIC_PARTITIONS": "1",
        "ENGRAM_EMBEDDING_EMBEDDER": embedder,
        "ENGRAM_MEMORY_EMBEDDER": embedder,
        "ENGRAM_MEMORY_VECTOR_PATH": str(root / "vectors"),
        **extra,
    }
    embedding = ServiceProcess("embedding", env, free_port(), root / "logs")
    memory = ServiceProcess("memory", env, free_port(), root / "logs")
    gateway_env = {**env, "ENGRAM_GATEWAY_MEMORY_URL": memory.url}
    gateway = ServiceProcess("gateway", gateway_env, free_port(), root / "logs")
    processes = [embedding, memory, gateway]
    for proc in processes:
        proc.start(wait=False)
    for proc in processes:
        proc.wait_ready(120)
    return processes, create_tenant(env, "bench")


def conversation(n: int) -> list[dict[str, Any]]:
    """20 messages: a system prompt, 9 user and 9 assistant turns, a tool result."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You plan trips."}]
    for turn in range(9):
        messages.append(
            {"role": "user", "content": f"Trip {n}, leg {turn}: which trains reach city {turn}?"}
        )
        messages.append(
            {"role": "assistant", "content": f"For trip {n} leg {turn} take train {n}-{turn}."}
        )
    messages.append({"role": "tool", "content": '{"fares": [1, 2]}', "name": "fares"})
    return messages


def active(client: httpx.Client, agent: str) -> int:
    counted = client.get(f"/v1/agents/{agent}/memories:count", params={"status": "active"})
    counted.raise_for_status()
    return int(counted.json()["count"])


def offline(count: int, embedder: str) -> dict[str, Any]:
    """Conversations/s from the first POST to every memory active."""
    with tempfile.TemporaryDirectory(prefix="engram-conv-bench-") as root:
        processes, key = start(Path(root), embedder)
        try:
            with httpx.Client(
                base_url=processes[-1].url, headers={"Authorization": f"Bearer {key}"}, timeout=60
            ) as client:
                agent = client.post("/v1/agents", json={"name": "bench"}).json()["agent_id"]
                started = time.monotonic()
                for n in range(count):
                    response = client.post(
                        f"/v1/agents/{agent}/conversations",
                        json={"messages": conversation(n), "user_id": "u1", "session_id": f"s{n}"},
                    )
                    response.raise_for_status()
                posted = time.monotonic() - started
                wanted = 18 * count
                until(lambda: active(client, agent) >= wanted, "every memory active", 1800, 0.2)
                seconds = time.monotonic() - started
        finally:
            for proc in processes:
                proc.stop()
    return {
        "embedder": embedder,
        "conversations": count,
        "messages_per_conversation": 20,
        "memories": wanted,
        "post_seconds": round(posted, 2),
        "seconds": round(seconds, 2),
        "conversations_per_second": round(count / seconds, 2),
        "memories_per_second": round(wanted / seconds, 1),
    }


def with_stub(count: int) -> dict[str, Any]:
    """Model calls per conversation: one extraction, one decision per fact with candidates."""
    stub = LlmStub().start()
    stub.answer('"new_fact"', content=json.dumps({"decision": "add", "memory_id": None}))
    stub.answer("user:", content=json.dumps({"facts": [{"content": f} for f in FACTS]}))
    with tempfile.TemporaryDirectory(prefix="engram-conv-bench-") as root:
        processes, key = start(
            Path(root),
            "hashing",
            ENGRAM_MEMORY_LLM_BASE_URL=stub.url,
            ENGRAM_MEMORY_LLM_MODEL="stub",
        )
        try:
            with httpx.Client(
                base_url=processes[-1].url, headers={"Authorization": f"Bearer {key}"}, timeout=60
            ) as client:
                agent = client.post("/v1/agents", json={"name": "bench"}).json()["agent_id"]
                calls: list[int] = []
                started = time.monotonic()
                for n in range(count):
                    response = client.post(
                        f"/v1/agents/{agent}/conversations",
                        json={"messages": conversation(n)[1:5], "user_id": "u1"},
                    )
                    response.raise_for_status()
                    url = response.json()["status_url"]

                    def settled(url: str = url) -> dict[str, Any] | None:
                        body: dict[str, Any] = client.get(url).json()
                        return body if body.get("settled") else None

                    done = until(settled, "the conversation settled", 120, 0.1)
                    calls.append(int(done["model_calls"]))
                seconds = time.monotonic() - started
        finally:
            for proc in processes:
                proc.stop()
            stub.stop()
    return {
        "conversations": count,
        "facts_per_conversation": len(FACTS),
        "model_calls": calls,
        "endpoint_calls": len(stub.calls),
        "model_calls_per_conversation": round(sum(calls) / count, 2),
        "first_conversation_calls": calls[0],
        "later_conversation_calls": sorted(set(calls[1:])),
        "sequential_conversations_per_second": round(count / seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--stub-conversations", type=int, default=20)
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    args = parser.parse_args()
    result = {
        "offline": offline(args.conversations, args.embedder),
        "stub_model": with_stub(args.stub_conversations),
    }
    print(json.dumps(result, indent=2), flush=True)
    target = ROOT / "bench-results" / "conversations.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(result, indent=2))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
