"""Batch writes over the real broker: one request, many memories, each as if written alone, on
the bulk lane (their own topics), so they never queue in front of single writes."""

from __future__ import annotations

from typing import Any

from tests.integration.memory.conftest import MemoryStack, new_agent, topic, wait_status
from tests.support.kafka import read_all


async def test_a_batch_stores_each_memory_once_and_names_what_was_already_held(
    stack: MemoryStack,
) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        body = {
            "memories": [
                {"content": "the customer prefers invoices by post", "idempotency_key": "b-1"},
                {"content": "the customer prefers invoices by post", "idempotency_key": "b-2"},
                {"content": "the carrier renewed the contract", "type": "note"},
            ]
        }
        answer = client.post(f"/v1/agents/{agent}/memories:batch", json=body)
        assert answer.status_code == 202, answer.text
        accepted = answer.json()["memories"]
        assert [a["status"] for a in accepted] == ["pending"] * 3
        assert [a.get("deduplicated", False) for a in accepted] == [False, True, False]
        ids = [a["memory_id"] for a in accepted]
        assert ids[1] == ids[0]
        assert [a["status_url"] for a in accepted] == [
            f"/v1/agents/{agent}/memories/{m}" for m in ids
        ]
        rows = [wait_status(client, agent, m, {"active", "rejected"}) for m in ids]
        again = client.post(f"/v1/agents/{agent}/memories:batch", json=body).json()["memories"]
        listed = client.get(f"/v1/agents/{agent}/memories").json()["memories"]
    assert [r["status"] for r in rows] == ["active", "active", "active"]
    assert rows[2]["type"] == "note"
    assert again[0]["memory_id"] == ids[0] and again[1]["memory_id"] == ids[0]
    assert again[2]["memory_id"] == ids[2] and again[2]["deduplicated"]
    bootstrap = stack.env["KAFKA_BOOTSTRAP_SERVERS"]
    writes = await read_all(bootstrap, topic(stack, "engram.memories-bulk.v1"))
    bulk = await read_all(bootstrap, topic(stack, "engram.embeddings-bulk.v1"))
    interactive = await read_all(bootstrap, topic(stack, "engram.embeddings.v1"))

    def items(messages: list[dict[str, Any] | None], event_type: str) -> list[str]:
        return [
            item["item_id"]
            for m in messages
            if m and m["event_type"] == event_type
            for item in m["payload"]["items"]
        ]

    assert {m["event_type"] for m in writes if m} == {"memory.bulk_write_requested"}
    assert sorted(items(bulk, "embedding.bulk_requested")) == sorted([ids[0], ids[2]])
    assert sorted(items(bulk, "embedding.bulk_computed")) == sorted([ids[0], ids[2]])
    assert not set(items(interactive, "embedding.requested")) & set(ids), (
        "a batch's writes travel the bulk lane only"
    )
    assert {m["memory_id"] for m in listed} >= {ids[0], ids[2]}


def test_a_batch_is_refused_whole_when_malformed_or_for_a_foreign_agent(
    stack: MemoryStack,
) -> None:
    with stack.client(stack.tenant("owner")) as client:
        agent = new_agent(client)
        url = f"/v1/agents/{agent}/memories:batch"
        refused = {
            "empty": {"memories": []},
            "too many": {"memories": [{"content": f"m {n}"} for n in range(101)]},
            "object as id": {"memories": [{"content": "x", "supersedes": {"$ne": None}}]},
            "unknown field": {"memories": [{"content": "x", "tenant_id": "other"}]},
            "blank content": {"memories": [{"content": "fine"}, {"content": "  "}]},
            "repeated key": {
                "memories": [
                    {"content": "one", "idempotency_key": "same"},
                    {"content": "two", "idempotency_key": "same"},
                ]
            },
        }
        statuses = {name: client.post(url, json=body).status_code for name, body in refused.items()}
        with stack.client(stack.tenant("intruder")) as intruder:
            foreign = intruder.post(url, json={"memories": [{"content": "sneaky"}]})
        listed = client.get(f"/v1/agents/{agent}/memories").json()["memories"]
    assert statuses == dict.fromkeys(refused, 422)
    assert foreign.status_code == 404
    assert listed == []
