"""Poison isolation: a write the contract or the database refuses, published straight to the
memories topic (as an older gateway would), is dead-lettered at its first attempt and ends
visible and terminal, while other tenants' writes go on.

The write contract now refuses these payloads when the consumer decodes them (the reason is
`MalformedEvent`); without it the database refuses them (`BulkWriteError`, `OverflowError`,
classified in tests/unit/platform/test_failure_kinds.py). Either way the item ends the same."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram_events import encode, new_event
from engram_events.catalog import CONVERSATION_SUBMITTED, MEMORY_WRITE_REQUESTED
from engram_events.payloads.conversations import ConversationMessage, ConversationSubmitted
from engram_events.payloads.memories import MemoryWriteRequested
from tests.integration.memory.conftest import MemoryStack, new_agent, topic, wait_status, write
from tests.support.kafka import produce, read_all, wait_for
from tests.support.polling import until

TERMINAL = {"active", "rejected", "withdrawn", "superseded"}
EXAMPLES = int(os.environ.get("ENGRAM_POISON_EXAMPLES", "12"))
"""Random writes the property test publishes: a few in `make test`, many in `make fuzz`."""


def wire(event: Any, **payload: Any) -> bytes:
    """The event's bytes with payload fields replaced, unvalidated, as an older producer sends."""
    body = json.loads(encode(event))
    body["payload"].update(payload)
    return json.dumps(body).encode()


def write_request(tenant_id: str, agent_id: str, content: str) -> Any:
    payload = MemoryWriteRequested(
        memory_id=f"mem_{uuid.uuid4().hex[:12]}", agent_id=agent_id, content=content
    )
    return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id=tenant_id)


async def tenant_of(stack: MemoryStack, memory_id: str) -> str:
    """The tenant id behind a key, from the write its gateway published."""
    found = await wait_for(
        stack.env["KAFKA_BOOTSTRAP_SERVERS"],
        topic(stack, "engram.memories.v1"),
        lambda m: m.get("payload", {}).get("memory_id") == memory_id,
    )
    return str(found[0]["tenant_id"])


async def poisoned_tenant(stack: MemoryStack, client: httpx.Client) -> tuple[str, str]:
    """An agent and its tenant id, learnt from one good write."""
    agent = new_agent(client)
    first = write(client, agent, "the first memory, written through the gateway")
    wait_status(client, agent, first, {"active"})
    return agent, await tenant_of(stack, first)


async def test_a_refused_write_is_dead_lettered_at_once_and_ends_rejected_with_its_reason(
    stack: MemoryStack,
) -> None:
    bootstrap = stack.env["KAFKA_BOOTSTRAP_SERVERS"]
    memories = topic(stack, "engram.memories.v1")
    with stack.client(stack.tenant("poisoned")) as client, stack.client(stack.tenant()) as other:
        agent, tenant_id = await poisoned_tenant(stack, client)
        poisons = {
            "dotted key": {"a.b": 1},
            "dollar key": {"$where": "x"},
            "int over 8 bytes": {"n": 2**70},
        }
        events = {name: write_request(tenant_id, agent, f"poison {name}") for name in poisons}
        await produce(
            bootstrap,
            memories,
            [wire(events[name], metadata=metadata) for name, metadata in poisons.items()],
            key=agent.encode(),
        )
        their_agent = new_agent(other)
        good = write(other, their_agent, "another tenant's write after the poison")
        wait_status(other, their_agent, good, {"active"})
        seen = {
            name: wait_status(client, agent, event.payload.memory_id, {"rejected", "active"})
            for name, event in events.items()
        }
        rejected = client.get(f"/v1/agents/{agent}/memories", params={"status": "rejected"})
        counted = client.get(f"/v1/agents/{agent}/memories:count").json()
        letters = await read_all(bootstrap, topic(stack, "engram.dlq.v1"))
        shown = client.get("/v1/dead-letters", params={"limit": 10})
        theirs = other.get("/v1/dead-letters").json()["dead_letters"]
        unknown = client.get("/v1/dead-letters", params={"tenant": "other"})
        chosen = shown.json()["dead_letters"][0]["letter_id"]
        replayed = client.post(f"/v1/dead-letters/{chosen}:replay")
        again = client.post(f"/v1/dead-letters/{chosen}:replay")
        refused_elsewhere = other.post(f"/v1/dead-letters/{chosen}:replay")
    for name, memory in seen.items():
        assert memory["status"] == "rejected", name
        assert memory["reason"].startswith("dead_lettered: "), memory["reason"]
        assert "content" not in memory and not memory.get("metadata"), name
    assert {memory["reason"] for memory in seen.values()} == {"dead_lettered: MalformedEvent"}
    listed = {m["memory_id"] for m in rejected.json()["memories"]}
    assert listed == {e.payload.memory_id for e in events.values()}
    assert counted["by_status"]["rejected"] == 3, counted
    ours = {str(e.event_id) for e in events.values()}
    mine = [letter for letter in letters if letter and letter.get("event_id") in ours]
    assert len(mine) == 3 and {letter["event_id"] for letter in mine} == ours
    assert all(letter["attempts"] == 1 and letter["consumer"] == "memory" for letter in mine)
    assert all(letter["tenant_id"] == tenant_id for letter in mine)
    assert shown.status_code == 200, shown.text
    visible = shown.json()["dead_letters"]
    assert {v["item"]["id"] for v in visible} == {e.payload.memory_id for e in events.values()}
    assert all(v["attempts"] == 1 and v["reason"] for v in visible)
    assert "poison" not in shown.text and "a.b" not in shown.text, "no content, no metadata"
    assert theirs == [], "another tenant sees none of them"
    assert unknown.status_code == 422
    assert replayed.status_code == 202 and again.status_code == 409
    assert refused_elsewhere.status_code == 404


async def test_a_refused_conversation_is_dead_lettered_and_ends_failed_and_settled(
    stack: MemoryStack,
) -> None:
    with stack.client(stack.tenant()) as client:
        agent, tenant_id = await poisoned_tenant(stack, client)
        payload = ConversationSubmitted(
            conversation_id=f"cnv_{uuid.uuid4().hex[:12]}",
            agent_id=agent,
            messages=[ConversationMessage(role="user", content="I live in Lisbon")],
        )
        event = new_event(CONVERSATION_SUBMITTED, payload, tenant_id=tenant_id)
        await produce(
            stack.env["KAFKA_BOOTSTRAP_SERVERS"],
            topic(stack, "engram.memories.v1"),
            [wire(event, metadata={"x.y": 1})],
            key=agent.encode(),
        )
        path = f"/v1/agents/{agent}/conversations/{payload.conversation_id}"

        def settled() -> dict[str, Any] | None:
            response = client.get(path)
            body: dict[str, Any] = response.json()
            return body if response.status_code == 200 and body.get("settled") else None

        conversation = until(settled, "the poisoned conversation to settle", 60, 0.2)
    assert conversation["status"] == "failed"
    assert conversation["error"] == "dead_lettered: MalformedEvent", conversation
    assert conversation["messages"] == [] and not conversation["metadata"]


keys = st.text(
    alphabet=st.sampled_from([*"ab.$_-:/ é\x00\x01\u2603", "\U0001f600"]), min_size=1, max_size=12
) | st.text(min_size=190, max_size=230)
values = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.lists(st.integers(), max_size=3)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)


def test_every_write_whatever_its_metadata_ends_in_a_terminal_status(stack: MemoryStack) -> None:
    """Random metadata published directly (keys with '.', '$', NUL, long keys; values with huge
    ints and nested values the contract refuses): none stays pending."""
    bootstrap = stack.env["KAFKA_BOOTSTRAP_SERVERS"]
    memories = topic(stack, "engram.memories.v1")
    with stack.client(stack.tenant()) as client:
        agent, tenant_id = asyncio.run(poisoned_tenant(stack, client))
        written: list[str] = []

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(metadata=st.dictionaries(keys, values, min_size=1, max_size=4))
        def publish(metadata: dict[str, Any]) -> None:
            event = write_request(tenant_id, agent, f"fuzzed write {len(written)}")
            written.append(event.payload.memory_id)
            produce_now = produce(bootstrap, memories, [wire(event, metadata=metadata)])
            asyncio.run(produce_now)
            memory = wait_status(client, agent, event.payload.memory_id, TERMINAL)
            assert memory["status"] in TERMINAL

        publish()
    assert len(written) == EXAMPLES
