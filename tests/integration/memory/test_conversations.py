"""Conversations without a model: each user and assistant message becomes a memory through the
normal write path (dedup included), system and tool messages stay in the conversation's record,
and deleting the conversation withdraws every memory derived from it (`verified_empty`)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write
from tests.support.polling import until

KNOWN = "The user prefers window seats on long flights."


def conversation_of_20() -> list[dict[str, Any]]:
    """20 messages: a system prompt, 9 user and 9 assistant turns (one user turn repeated, one
    saying what a memory already holds), and a tool result."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a travel agent."}]
    for n in range(9):
        messages.append({"role": "user", "content": f"Trip question {n}: options for leg {n}?"})
        messages.append(
            {"role": "assistant", "content": f"Leg {n} has {n + 2} options.", "name": "planner"}
        )
    messages[3] = {"role": "user", "content": "trip question 0:   OPTIONS for leg 0?"}
    messages[5] = {"role": "user", "content": KNOWN, "at": "2026-12-04T09:00:00Z"}
    messages.append({"role": "tool", "content": '{"fares": [120, 180]}', "name": "fares"})
    return messages


def converse(client: httpx.Client, agent: str, **body: Any) -> dict[str, Any]:
    response = client.post(f"/v1/agents/{agent}/conversations", json=body)
    assert response.status_code == 202, response.text
    accepted: dict[str, Any] = response.json()
    assert accepted["status_url"].endswith(accepted["conversation_id"])
    return accepted


def settled(client: httpx.Client, agent: str, conversation_id: str) -> dict[str, Any]:
    def look() -> dict[str, Any] | None:
        answer = client.get(f"/v1/agents/{agent}/conversations/{conversation_id}")
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body if body.get("settled") else None

    found: dict[str, Any] = until(look, f"conversation {conversation_id} settled", 60)
    return found


def prune_job_done(client: httpx.Client, url: str) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        job: dict[str, Any] = client.get(url).json()
        return job if job["status"] != "running" else None

    found: dict[str, Any] = until(finished, "the conversation's prune job", 60)
    return found


def test_messages_become_memories_and_go_with_the_conversation(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        known = write(client, agent, KNOWN, user_id="u-7", session_id="s-1")
        wait_status(client, agent, known, {"active"})
        messages = conversation_of_20()
        accepted = converse(
            client,
            agent,
            messages=messages,
            user_id="u-7",
            session_id="s-1",
            metadata={"channel": "web"},
            idempotency_key="conv-1",
        )
        again = converse(client, agent, messages=messages, idempotency_key="conv-1")
        assert again["conversation_id"] == accepted["conversation_id"], "same key, same id"
        cid = accepted["conversation_id"]
        done = settled(client, agent, cid)

        assert done["status"] == "processed" and done["mode"] == "messages"
        outcomes = [m["outcome"] for m in done["messages"]]
        assert outcomes.count("memory") == 18 and outcomes.count("kept") == 2
        by_index = {m["index"]: m for m in done["messages"]}
        assert by_index[3]["memory_status"] == "rejected"
        assert by_index[3]["duplicate_of"] == by_index[1]["memory_id"], "dedup within it"
        assert by_index[5]["memory_status"] == "rejected" and by_index[5]["duplicate_of"] == known
        assert done["memories"] == {"active": 16, "rejected": 2}

        listed = client.get(
            f"/v1/agents/{agent}/memories", params={"type": "conversation", "status": "active"}
        ).json()["memories"]
        mine = [m for m in listed if m["memory_id"] != known]
        assert len(mine) == 16
        roles = {m["metadata"]["role"] for m in mine}
        assert roles == {"user", "assistant"}
        for memory in mine:
            assert (memory["user_id"], memory["session_id"]) == ("u-7", "s-1")
            assert memory["metadata"]["conversation_id"] == cid
            assert memory["metadata"]["channel"] == "web"
            assert memory["derived_from"] == [cid]

        deleted = client.delete(f"/v1/agents/{agent}/conversations/{cid}")
        assert deleted.status_code == 202, deleted.text
        job = prune_job_done(client, deleted.json()["status_url"])
        assert job["kind"] == "conversation" and job["verified_empty"] is True, job
        assert job["counts"]["memories"] == 16
        gone = client.get(f"/v1/agents/{agent}/conversations/{cid}").json()
        assert gone["status"] == "deleted"
        assert all("content" not in m for m in gone["messages"]), "texts go with it"
        assert gone["memories"] == {"withdrawn": 16, "rejected": 2}
        assert wait_status(client, agent, known, {"active"})["status"] == "active"
        counted = client.get(f"/v1/agents/{agent}/memories:count").json()
        assert counted["by_status"].get("active") == 1


def test_limits_and_unknown_fields_are_refused_at_the_door(
    start_stack: Any,
) -> None:
    stack = start_stack(
        ENGRAM_MEMORY_CONVERSATION_MAX_MESSAGES="3", ENGRAM_MEMORY_MAX_CONTENT_CHARS="50"
    )
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        url = f"/v1/agents/{agent}/conversations"
        hello = {"role": "user", "content": "hello"}
        too_many = client.post(url, json={"messages": [hello] * 4})
        assert too_many.status_code == 422
        assert too_many.json()["errors"][0]["loc"] == ["body", "messages"]
        too_long = client.post(
            url, json={"messages": [hello, {"role": "user", "content": "x" * 51}]}
        )
        assert too_long.status_code == 422
        assert too_long.json()["errors"][0]["loc"] == ["body", "messages", "1", "content"]
        unknown = client.post(url, json={"messages": [hello], "priority": 1})
        assert unknown.status_code == 422 and "priority" in unknown.text
        inner = client.post(url, json={"messages": [{**hello, "mood": "ok"}]})
        assert inner.status_code == 422 and "mood" in inner.text
        role = client.post(url, json={"messages": [{"role": "robot", "content": "x"}]})
        assert role.status_code == 422 and "role" in role.text
        param = client.post(url, params={"dry_run": "1"}, json={"messages": [hello]})
        assert param.status_code == 422 and "dry_run" in param.text
        assert client.get(f"{url}/conv_nope").status_code == 404
        assert client.delete(f"{url}/conv_nope").status_code == 404
        other = stack.client(stack.tenant("other"))
        accepted = converse(client, agent, messages=[hello])
        assert other.get(f"{url}/{accepted['conversation_id']}").status_code == 404
        other.close()


def test_an_accepted_conversation_survives_the_memory_service_being_down_and_killed(
    stack: MemoryStack,
) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        stack.memory.stop()
        turns = [{"role": "user", "content": f"Turn {n} of a chat kept."} for n in range(6)]
        accepted = converse(client, agent, messages=turns, idempotency_key="k-1")
        cid = accepted["conversation_id"]
        waiting = client.get(f"/v1/agents/{agent}/conversations/{cid}")
        assert waiting.status_code == 503 or waiting.json()["status"] == "pending"
        stack.memory.start()
        done = settled(client, agent, cid)
        assert done["memories"] == {"active": 6}
        stack.memory.kill9()
        stack.memory.start()
        again = converse(client, agent, messages=turns, idempotency_key="k-1")
        assert again["conversation_id"] == cid
        other = converse(client, agent, messages=turns[:1], idempotency_key="k-2")
        settled(client, agent, other["conversation_id"])
        counted = client.get(f"/v1/agents/{agent}/memories:count").json()
        assert counted["by_status"] == {"active": 6, "rejected": 1}, counted
        assert settled(client, agent, cid)["memories"] == {"active": 6}
