"""Conversations with a model, against a local chat-completions stub: facts are proposed, each
decided `add`, `supersede` or `skip` against the agent's most similar memories, every decision
recorded; a later contradicting conversation supersedes the older memory (kept, readable as
`superseded`); malformed output fails the conversation, a 500 is retried, endless failures are
dead-lettered; and no conversation text reaches a log or a span."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pymongo import MongoClient

from tests.integration.memory.conftest import MemoryStack, new_agent, topic, wait_status, write
from tests.integration.memory.test_conversations import converse, prune_job_done, settled
from tests.support.kafka import wait_for
from tests.support.llm_stub import STUB_MODEL, LlmStub
from tests.support.polling import until
from tests.support.spans import stored_spans

CANARY = "CANARY-3e7a-conversation"
USER = "u-41"


@pytest.fixture
def stub() -> Iterator[LlmStub]:
    server = LlmStub().start()
    yield server
    server.stop()


@pytest.fixture
def model_stack(start_stack: Callable[..., MemoryStack], stub: LlmStub) -> MemoryStack:
    return start_stack(
        ENGRAM_MEMORY_LLM_BASE_URL=stub.url,
        ENGRAM_MEMORY_LLM_MODEL="configured-model",
        ENGRAM_MEMORY_LLM_API_KEY="sk-stub-key",
        ENGRAM_MEMORY_MAX_ATTEMPTS="3",
        ENGRAM_MEMORY_RETRY_BASE_SECONDS="0.05",
        ENGRAM_LOG_LEVEL="DEBUG",
    )


def facts(*contents: str) -> dict[str, Any]:
    return {"content": json.dumps({"facts": [{"content": c} for c in contents]})}


def decide(stub: LlmStub, fact: str, decision: str, memory_id: str | None = None) -> None:
    reply = json.dumps({"decision": decision, "memory_id": memory_id})
    stub.answer(f'"new_fact": {json.dumps(fact)}', content=reply)


def chat(*turns: str) -> list[dict[str, Any]]:
    roles = ["user", "assistant"]
    return [{"role": roles[n % 2], "content": text} for n, text in enumerate(turns)]


def memory(client: Any, agent: str, memory_id: str) -> dict[str, Any]:
    found: dict[str, Any] = client.get(f"/v1/agents/{agent}/memories/{memory_id}").json()
    return found


def test_add_supersede_skip_and_a_later_contradiction(
    model_stack: MemoryStack, stub: LlmStub
) -> None:
    stack = model_stack
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        vegetarian = write(client, agent, "The user is vegetarian.", user_id=USER)
        dog = write(client, agent, "The user has a dog named Rex.", user_id=USER)
        for memory_id in (vegetarian, dog):
            wait_status(client, agent, memory_id, {"active"})
        lisbon, rex = f"The user lives in Lisbon. {CANARY}", "The user's dog Rex is three."
        stub.answer("moved to Lisbon", **facts(lisbon, "The user is vegetarian.", rex))
        decide(stub, lisbon, "add")
        decide(stub, "The user is vegetarian.", "skip", vegetarian)
        decide(stub, rex, "supersede", dog)
        first = converse(
            client,
            agent,
            user_id=USER,
            session_id="s-1",
            messages=chat(
                f"I moved to Lisbon last month, {CANARY}. Still no meat for me.",
                "Noted! How is Rex?",
                "Rex turned three.",
            ),
        )
        done = settled(client, agent, first["conversation_id"])
        assert done["status"] == "processed" and done["mode"] == "model", done
        assert done["model_calls"] == 4, "one extraction, three decisions"
        assert [m["outcome"] for m in done["messages"]] == ["read_by_model"] * 3
        added, skipped, superseding = done["facts"]
        assert (added["decision"], skipped["decision"], superseding["decision"]) == (
            "add",
            "skip",
            "supersede",
        )
        for fact in done["facts"]:
            assert fact["model"] == STUB_MODEL and len(fact["output_sha256"]) == 16
            assert vegetarian in fact["candidates"] and dog in fact["candidates"]
        assert skipped["known_as"] == vegetarian and "memory_id" not in skipped
        assert superseding["supersedes"] == dog
        assert added["memory_status"] == superseding["memory_status"] == "active"

        kept = memory(client, agent, added["memory_id"])
        assert kept["derived_from"] == [first["conversation_id"]] and kept["type"] == "fact"
        assert kept["user_id"] == USER and kept["session_id"] == "s-1"
        assert kept["provenance"]["extracted_by"] == {
            "model": STUB_MODEL,
            "conversation_id": first["conversation_id"],
            "decision": "add",
            "output_sha256": added["output_sha256"],
        }
        old_dog = memory(client, agent, dog)
        assert old_dog["status"] == "superseded"
        assert old_dog["superseded_by"] == superseding["memory_id"]
        assert old_dog["content"] == "The user has a dog named Rex.", "kept, never deleted"

        porto = "The user lives in Porto."
        stub.answer("moved on to Porto", **facts(porto))
        decide(stub, porto, "supersede", added["memory_id"])
        second = converse(
            client, agent, user_id=USER, messages=chat("Lisbon was too hilly; I moved on to Porto.")
        )
        later = settled(client, agent, second["conversation_id"])
        [moved] = later["facts"]
        assert moved["decision"] == "supersede" and moved["supersedes"] == added["memory_id"]
        older = memory(client, agent, added["memory_id"])
        assert older["status"] == "superseded" and older["superseded_by"] == moved["memory_id"]
        assert older["content"] == lisbon
        recalled = client.post(
            f"/v1/agents/{agent}/recall",
            json={"query": "where does the user live", "min_score": -1, "top_k": 10},
        ).json()["results"]
        assert added["memory_id"] not in {r["memory_id"] for r in recalled}

        calls = [c for c in stub.calls if "configured-model" == c.body["model"]]
        assert calls and all(c.authorization == "Bearer sk-stub-key" for c in calls)
        assert calls[0].body["response_format"]["type"] == "json_schema"

        deleted = client.delete(f"/v1/agents/{agent}/conversations/{first['conversation_id']}")
        job_url = deleted.json()["status_url"]
        job = prune_job_done(client, job_url)
        assert job["verified_empty"] is True and job["counts"]["memories"] == 2
        assert memory(client, agent, superseding["memory_id"])["status"] == "withdrawn"
        assert memory(client, agent, vegetarian)["status"] == "active", "only what it derived"

    no_canary_in_telemetry(stack)


def no_canary_in_telemetry(stack: MemoryStack) -> None:
    """Stop the processes (flushing spans), then look for the canary in every log and span."""
    for process in stack.processes():
        process.stop()
    db = MongoClient[dict[str, Any]](stack.env["MONGODB_URI"])[
        f"{stack.env['ENGRAM_DATABASE_PREFIX']}telemetry"
    ]
    spans = until(
        lambda: stored_spans(db.spans),
        "memory's spans flushed",
        10,
        ready=lambda spans: any(s.get("service") == "engram-memory" for s in spans),
    )
    assert any(s.get("service") == "engram-memory" for s in spans)
    captured = {p.name: p.logs() for p in stack.processes()}
    captured["spans"] = json.dumps(spans, default=str)
    assert STUB_MODEL in captured["memory"], "the model the endpoint reported is logged"
    for where, text in captured.items():
        for canary in (CANARY, "Lisbon", "Porto", "vegetarian"):
            assert canary not in text, f"{where} leaked conversation text ({canary})"


def test_malformed_output_fails_and_a_500_is_retried(
    model_stack: MemoryStack, stub: LlmStub
) -> None:
    stack = model_stack
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        stub.answer("garbled please", content='{"facts": [{"content": ')
        stub.answer("nonsense choice", **facts("The user likes jazz."))
        decide(stub, "The user likes jazz.", "supersede", "mem_not_shown")
        stub.answer("flaky endpoint", **facts("The user plays chess."))
        decide(stub, "The user plays chess.", "add")

        garbled = converse(client, agent, messages=chat("garbled please"))
        failed = settled(client, agent, garbled["conversation_id"])
        assert failed["status"] == "failed"
        assert failed["error"].startswith("the model's output is not valid JSON"), failed
        assert failed["memories"] == {}

        write(client, agent, "The user likes blues.")
        wait_for_active(client, agent)
        chosen = converse(client, agent, messages=chat("nonsense choice"))
        refused = settled(client, agent, chosen["conversation_id"])
        assert refused["status"] == "failed"
        assert refused["error"] == "the model's `supersede` names no memory it was shown"

        stub.fail(500, times=1)
        flaky = converse(client, agent, messages=chat("flaky endpoint"))
        done = settled(client, agent, flaky["conversation_id"])
        assert done["status"] == "processed", done
        asked = [c for c in stub.calls if "flaky endpoint" in c.user_text]
        assert len(asked) == 2, "the 500 was retried, then answered"
        assert [f["memory_status"] for f in done["facts"]] == ["active"]

        stub.fail(503, times=3)
        down = converse(client, agent, messages=chat("flaky endpoint again"))
        gave_up = settled(client, agent, down["conversation_id"])
        assert gave_up["status"] == "failed"
        assert gave_up["error"] == "processing failed after 3 attempts (ModelUnavailable)"
        letters = asyncio.run(
            wait_for(
                stack.env["KAFKA_BOOTSTRAP_SERVERS"],
                topic(stack, "engram.dlq.v1"),
                lambda m: m.get("event_type") == "conversation.submitted",
            )
        )
        assert "ModelUnavailable" in letters[0]["error_type"] + letters[0]["error"]


def wait_for_active(client: Any, agent: str) -> None:
    until(
        lambda: client.get(
            f"/v1/agents/{agent}/memories:count", params={"status": "active"}
        ).json()["count"],
        "an active memory",
        30,
    )


def test_a_crash_mid_decision_asks_again_only_what_was_unanswered(
    model_stack: MemoryStack, stub: LlmStub
) -> None:
    stack = model_stack
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        held = write(client, agent, "The user drinks coffee.", user_id=USER)
        wait_status(client, agent, held, {"active"})
        tea, milk = "The user drinks tea now.", "The user takes oat milk."
        stub.answer("switched to tea", **facts(tea, milk))
        decide(stub, tea, "supersede", held)
        decide(stub, milk, "add")
        stub.rule(f'"new_fact": {json.dumps(milk)}').stall_seconds = 60
        accepted = converse(
            client, agent, user_id=USER, messages=chat("I switched to tea, with oat milk.")
        )
        until(lambda: stub.stalled, "the second decision reaching the model", 60)
        stack.memory.kill9()
        stub.rule(f'"new_fact": {json.dumps(milk)}').stall_seconds = 0
        stack.memory.start()
        done = settled(client, agent, accepted["conversation_id"])
        assert done["status"] == "processed", done
        assert [f["decision"] for f in done["facts"]] == ["supersede", "add"]

        def asked(fragment: str) -> int:
            return sum(1 for c in stub.calls if fragment in c.user_text)

        assert asked("switched to tea") == 1, "the saved facts were not asked for again"
        assert asked(f'"new_fact": {json.dumps(tea)}') == 1, "the saved decision neither"
        assert asked(f'"new_fact": {json.dumps(milk)}') == 2, "the unanswered one once more"
        counted = client.get(f"/v1/agents/{agent}/memories:count").json()
        assert counted["by_status"] == {"active": 2, "superseded": 1}, counted
